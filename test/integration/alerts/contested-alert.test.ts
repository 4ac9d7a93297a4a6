/**
 * Contested logins end to end (`src/queue/contest.ts`), on the CLI: a running `holdfast run
 * --http` on a real Redis, scraped by a real Prometheus with the shipped rules. A login changed
 * by hand three times after holdfast put it back (dropped, its password changed, `+@all` added;
 * each once a check found it held again) is said contested once (a fourth change says nothing
 * more), shown in `holdfast status`'s JSON
 * and on the consumer's page, counted by `holdfast_contested_consumers`, and fires
 * `HoldfastConsumerContested`; holdfast restores it every time; once a `contestedWindow` passes
 * without a change, the gauge drops and the alert resolves.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { startScrapedHoldfast, type ScrapedHoldfast } from '../../support/scraped-holdfast.js';
import { EngineFixture, type Consumer } from '../engine/engine-fixture.js';
import { until } from '../../support/until.js';

const WINDOW_S = 30;

interface StatusJson {
  providers: Array<{
    provider: string;
    healthy: boolean;
    contested: {
      count: number;
      consumers: Array<{ consumer: string; findings: number; last: string; windowMs: number }>;
    };
  }>;
}

describe('a contested login, end to end', () => {
  let fixture: EngineFixture | undefined;
  let scene: ScrapedHoldfast | undefined;
  afterAll(async () => {
    scene?.kill();
    await fixture?.stop();
  });

  it('changed by hand three times after holdfast put it back: said once, shown, counted, alerted; the alert resolves a window after the last change', async () => {
    const backend = await ownBackend('redis');
    const root = new Redis({
      host: backend.host,
      port: backend.port,
      username: backend.admin.username,
      password: backend.admin.password,
    });
    root.on('error', () => undefined);
    afterAll(() => root.disconnect());
    fixture = await EngineFixture.create({
      provider: backend,
      consumers: 3,
      // every check deep (rules compared), so that a rule added by hand is found at the next check
      timing: {
        verifyEvery: '1s',
        checkTimeout: '1s',
        deepCheckEvery: '1s',
        jitter: 0,
        contestedWindow: `${WINDOW_S}s`,
      },
    });
    const f = fixture;
    const [victim, ...others] = f.consumers as [Consumer, ...Consumer[]];
    scene = await startScrapedHoldfast(f, 3);
    const { holdfast, hf, prometheus, said, seen } = scene;
    const status = () => scene!.status<StatusJson & { consumers: Array<{ consumer: string; state: string }> }>();
    await until(
      'holdfast scraped, nothing contested',
      async () => ((await prometheus.query('holdfast_contested_consumers'))[0]?.value === 0 ? true : undefined),
      30_000,
      seen,
    );
    const contested = () => scene!.alertsNamed('HoldfastConsumerContested');

    const commandsOf = async (login: string) => {
      const reply = (await root.call('ACL', 'GETUSER', login)) as unknown[] | null;
      return reply ? String(reply[reply.indexOf('commands') + 1]) : null;
    };
    const contestLines = () =>
      holdfast
        .output()
        .split('\n')
        .filter((l) => l.includes(' is contested: '));
    const victimStatus = async () =>
      (await status()).consumers.find((c) => c.consumer === victim.key) as
        { state: string; brakeCount: number; lastCheck: { at: string; outcome: string } | null } | undefined;
    /**
     * A change by hand, then holdfast puts it back, then a check finds it held (the brake released):
     * only then is the next change one "after holdfast re-applied it". A heal whose confirmation
     * could not ask in time (a loaded machine) is the brake's case, not a finding: the loop below
     * then changes it once more.
     */
    const changeAndHeal = async (what: string, change: () => Promise<unknown>) => {
      const at = Date.now();
      await change();
      await until(
        `${what} undone by holdfast`,
        async () =>
          (await f.canLogin(victim)) && !(await commandsOf(victim.login))?.includes('+@all') ? true : undefined,
        20_000,
        said,
      );
      await until(
        `${what}: held at a later check`,
        async () => {
          const c = await victimStatus();
          return c?.state === 'held' &&
            c.brakeCount === 0 &&
            c.lastCheck?.outcome === 'held' &&
            Date.parse(c.lastCheck.at) > at + 500
            ? true
            : undefined;
        },
        20_000,
        said,
      );
    };
    const changes: Array<[string, () => Promise<unknown>]> = [
      ['the drop', () => root.call('ACL', 'DELUSER', victim.login)],
      ['the new password', () => root.call('ACL', 'SETUSER', victim.login, 'resetpass', '>changed-by-hand')],
      ['+@all', () => root.call('ACL', 'SETUSER', victim.login, '+@all')],
      ['+@all again', () => root.call('ACL', 'SETUSER', victim.login, '+@all')],
      ['+@all once more', () => root.call('ACL', 'SETUSER', victim.login, '+@all')],
    ];

    // changes by hand, each after holdfast put the login back, until it is said contested (three findings)
    const started = Date.now();
    let made = 0;
    for (const [what, change] of changes) {
      await changeAndHeal(what, change);
      made++;
      if (made < 3) expect(contestLines()).toEqual([]);
      if (contestLines().length > 0) break;
    }
    await until('said contested', () => Promise.resolve(contestLines().length > 0 ? true : undefined), 10_000, said);
    expect(made).toBeGreaterThanOrEqual(3);
    const [line] = contestLines();
    const logged = JSON.parse(line!) as { msg: string; level: number; consumer: string };
    expect(logged.consumer).toBe(victim.key);
    expect(logged.msg).toMatch(
      new RegExp(
        `^${victim.key} is contested: changed outside holdfast 3 times in ${WINDOW_S}s, last: rules-differ \\(commands: the backend also allows `,
      ),
    );

    // shown: the status's JSON, the consumer's page (the others are not contested)
    const provider = (await status()).providers.find((p) => p.provider === 'cache')!;
    expect(provider.contested.count).toBe(1);
    expect(provider.contested.consumers).toEqual([
      expect.objectContaining({ consumer: victim.key, windowMs: WINDOW_S * 1000 }),
    ]);
    const counted = provider.contested.consumers[0]!.findings;
    expect(counted).toBeGreaterThanOrEqual(3);
    expect(provider.contested.consumers[0]!.last).toMatch(/^rules-differ \(commands: the backend also allows /);
    expect(provider.healthy).toBe(true); // held: contested is a warning, not unserved
    const page = await (await fetch(`${hf}/consumer?key=${encodeURIComponent(victim.key)}`)).text();
    expect(page).toContain('id="contested"');
    expect(page).toContain(`${victim.key} is contested since`);
    const otherPage = await (await fetch(`${hf}/consumer?key=${encodeURIComponent(others[0]!.key)}`)).text();
    expect(otherPage).not.toContain('id="contested"');

    // counted, and alerted by the shipped rule
    const firing = await until(
      'HoldfastConsumerContested firing',
      async () => (await contested()).find((a) => a.state === 'firing'),
      30_000,
      seen,
    );
    const firedAfter = Date.now() - started;
    expect(firing.labels).toMatchObject({
      alertname: 'HoldfastConsumerContested',
      severity: 'warning',
      provider: 'cache',
    });
    expect(firing.annotations.summary).toBe(
      'holdfast: 1 contested consumer(s) on provider cache: changed outside holdfast again and again',
    );
    expect((await fetch(`${hf}/metrics`).then((r) => r.text())).split('\n')).toContain(
      'holdfast_contested_consumers{provider="cache"} 1',
    );

    // a further change: put back again, counted, still contested, not said again
    for (let more = 0; more < 3 && (await status()).providers[0]!.contested.consumers[0]!.findings <= counted; more++) {
      await changeAndHeal('a further +@all', () => root.call('ACL', 'SETUSER', victim.login, '+@all'));
    }
    expect((await status()).providers[0]!.contested.consumers[0]!.findings).toBeGreaterThan(counted);
    expect(contestLines()).toHaveLength(1);
    const lastChangeAt = Date.now();

    // a window without a change: no longer contested, the alert resolves
    await until(
      'HoldfastConsumerContested resolved',
      async () => ((await contested()).length === 0 ? true : undefined),
      (WINDOW_S + 30) * 1000,
      seen,
    );
    const resolvedAfter = Date.now() - lastChangeAt;
    expect(resolvedAfter).toBeGreaterThanOrEqual(WINDOW_S * 1000 - 3000);
    expect((await status()).providers[0]!.contested).toEqual({ count: 0, consumers: [] });
    expect((await prometheus.query('holdfast_contested_consumers'))[0]?.value).toBe(0);
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    expect(await commandsOf(victim.login)).not.toContain('+@all');
    expect(contestLines()).toHaveLength(1);
    // no secret said: the password set by hand is not in anything holdfast printed
    expect(holdfast.output()).not.toContain('changed-by-hand');
    expect((await prometheus.ruleHealth()).filter((r) => r.health !== 'ok')).toEqual([]);
    console.log(
      `[alerts] contested (window ${WINDOW_S} s, verifyEvery 1 s): HoldfastConsumerContested fired ${(firedAfter / 1000).toFixed(1)} s after the first of three changes by hand; ` +
        `resolved ${(resolvedAfter / 1000).toFixed(1)} s after the last change`,
    );
  }, 240_000);
});

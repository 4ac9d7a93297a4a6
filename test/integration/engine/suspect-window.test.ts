/**
 * A check under way as its node restarts (rule 13): it asked the node that was, so what it found says nothing of the
 * node since. Its consumer stays suspect when its lock is released after the restart was seen, is asked again at once
 * (healed, its login written once), and the status stays red until it is.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/adapters/adapter.js';
import type { RedisNodesAdapter } from '../../../src/adapters/redis-acl/index.js';
import { connectAdapter } from '../../../src/config/config.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { engineFixtures, type EngineFixture, type LogLine } from './engine-fixture.js';

/**
 * A check of `login` held under way: the real adapter asks the server, then its answer is held back until `open`.
 * `asked` resolves once the server answered (the check is under way with an answer from the node as it was).
 */
class HeldCheck {
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));
  private told: () => void = () => undefined;
  readonly asked = new Promise<void>((resolve) => (this.told = resolve));
  /** What the held check found, as the engine will be told it. */
  found: string | undefined;

  constructor(
    adapter: RedisNodesAdapter,
    private readonly login: string,
  ) {
    const authenticates = adapter.authenticates.bind(adapter);
    const holdsMany = adapter.holdsMany.bind(adapter);
    const holds = adapter.holds.bind(adapter);
    adapter.authenticates = async (grant, options) => this.held(grant, await authenticates(grant, options));
    adapter.holds = async (grant, options) => this.held(grant, await holds(grant, options));
    adapter.holdsMany = async (grants, options) => {
      const answers = await holdsMany(grants, options);
      return grants.some((g) => g.login === this.login) ? this.held(grants[0]!, answers, true) : answers;
    };
  }

  /** The answer, held back until {@link open} when it is about `login` (`any`: the batch has it). */
  private async held<T>(grant: Grant, answer: T, any = false): Promise<T> {
    if (!any && grant.login !== this.login) return answer;
    if (this.found !== undefined) return answer; // held once
    this.found = JSON.stringify(answer);
    this.told();
    await this.gate;
    return answer;
  }

  open(): void {
    this.release();
  }
}

/** How many `ACL SETUSER` the server ran since it started (its command stats start empty with it). */
async function setUsers(url: string): Promise<number> {
  const admin = new Redis(url);
  const stats = await admin.info('commandstats');
  admin.disconnect();
  return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

async function lineSaid(f: EngineFixture, since: number, matches: (l: LogLine) => boolean): Promise<LogLine> {
  await f.until('the line looked for', () => f.logs.some((l) => (l.time as number) >= since && matches(l)), 20_000);
  return f.logs.find((l) => (l.time as number) >= since && matches(l))!;
}

describe('a check under way as the cache restarts empty', () => {
  const fixture = engineFixtures();

  it('leaves its consumer suspect at its release after the restart: asked again at once, healed once, red until then', async () => {
    const provider = await ownBackend('redis');
    const queue = sharedBackend('redis');
    const f = await fixture({
      provider,
      queue,
      consumers: 4,
      timing: { verifyEvery: '60s', checkTimeout: '30s' },
    });
    const adapter = connectAdapter(f.config.providers[0]!) as RedisNodesAdapter;
    await f.startHeld(undefined, adapter);
    await f.until('status healthy', async () => (await f.status()).healthy, 60_000);
    const [target] = f.consumers;
    const held = new HeldCheck(adapter, target!.login);

    // its routine check brought forward by hand (its next is a minute away): asked, answered held, held back
    const redis = new Redis(queue.url);
    const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
    await redis.zadd(keys.due, 'XX', Date.now(), target!.key);
    redis.disconnect();
    await held.asked;
    expect(held.found).toMatch(/true|"held":true/);

    const restarted = Date.now();
    await provider.restart({ keepData: false });
    const node = new URL(provider.url).host;
    const said = await lineSaid(f, restarted, (l) => l.msg.startsWith(`cache ${node} restarted (new run id): asking`));
    // every consumer, the one being checked too (made suspect, its wait left alone)
    expect(said.msg).toBe(`cache ${node} restarted (new run id): asking its 4 consumers now`);
    await f.until(
      'the other consumers authenticate again',
      async () => (await Promise.all(f.consumers.slice(1).map((c) => f.canLogin(c)))).every(Boolean),
      30_000,
    );
    expect(await f.canLogin(target!)).toBe(false);

    // the held check ends now, after the restart was seen, with what the node that was answered
    const ended = Date.now();
    held.open();
    const greenWhileGone: string[] = [];
    const backMs = await f.until(
      `${target!.key} to authenticate again, long before its next interval`,
      async () => {
        const [status, back] = await Promise.all([f.status(), f.canLogin(target!)]);
        if (status.healthy && !(await f.canLogin(target!)))
          greenWhileGone.push(`status green at +${Date.now() - restarted} ms while ${target!.key} cannot log in`);
        return back || greenWhileGone.length > 0;
      },
      30_000,
    );
    expect(greenWhileGone).toEqual([]);
    // asked again at once by its own release, not left for the stragglers' re-ask (after 5 s without progress)
    const reasked = f.logs.filter(
      (l) => (l.time as number) >= ended && l.msg.includes('still not asked, asking again'),
    );
    expect(reasked.map((l) => l.msg)).toEqual([]);
    console.log(
      `[suspect-window] the consumer whose check was under way authenticates again ${backMs} ms after it ended`,
    );
    expect(Date.now() - restarted).toBeLessThan(60_000); // not at its next interval
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);
    // one login written per consumer for the one restart: the held one healed once, by its second asking
    expect(await setUsers(provider.url)).toBe(4);
  }, 180_000);
});

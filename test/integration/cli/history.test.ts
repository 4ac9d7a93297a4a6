/**
 * `holdfast history` and `GET /consumers/<provider>/<id>/history` on real servers: a consumer's
 * transitions through a restart of its cache (it forgets the login, holdfast heals it without a
 * record write), a restart of holdfast itself, a rotation of its grant secret and a suspension,
 * each listed in order with its reason and cause; the endpoint answers the same JSON behind the
 * dashboard's auth; bad keys are refused clearly on both, never echoing a control character.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConsumerHistory } from '../../../src/history/consumer-history.js';
import { ownBackend } from '../../backends/index.js';
import { spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures, readable } from '../engine/engine-fixture.js';

async function holdfastOnce(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawnHoldfast(args);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output: child.output() };
}

/** GET `path` as written (no URL normalization: `..` and escapes reach the server as sent). */
function get(url: string, path: string, auth?: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path,
        headers: auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Whether `list` holds `wanted` in this order (others may come between). */
function inOrder<T, W>(list: readonly T[], wanted: readonly W[], same: (a: T, b: W) => boolean): boolean {
  let at = 0;
  for (const item of list) if (at < wanted.length && same(item, wanted[at]!)) at++;
  return at === wanted.length;
}

const CONTROL = /[\p{Cc}\p{Cf}]/u;

describe('holdfast history', () => {
  const fixture = engineFixtures();

  it('lists a restart of the cache (a heal), a restart of holdfast, a rotation and a suspension, in order, with reasons and causes; the endpoint answers the same behind auth', async () => {
    const cache = await ownBackend('redis');
    const f = await fixture({ provider: cache, consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    const config = join(f.dir, 'holdfast.yaml');
    const [subject] = f.consumers;
    const key = subject!.key;
    let engine = await f.startHeld();

    // the cache restarts without an ACL file: it forgets the login; holdfast heals it (no record write)
    await cache.restart({ keepData: false });
    await f.until('the login healed after the cache restarted', () => f.canLogin(subject!), 20_000);
    // holdfast itself restarts
    await engine.stop();
    f.engines.splice(0);
    engine = await f.start();
    // the grant secret rotates
    subject!.password = randomBytes(18).toString('base64url');
    writeFileSync(subject!.secretPath, `${subject!.password}\n`, { mode: 0o600 });
    await f.until('the rotated secret applied', () => f.canLogin(subject!), 20_000);
    await f.until(
      'held again after the rotation',
      async () => readable(await engine.store.get(key))?.machine.state === 'held',
    );
    // an operator suspends it
    expect((await holdfastOnce(['suspend', key, '-c', config])).code).toBe(0);
    await f.until('suspended', async () => readable(await engine.store.get(key))?.machine.state === 'suspended');

    const json = await holdfastOnce(['history', key, '-c', config, '--json']);
    expect(json.code).toBe(0);
    const history = JSON.parse(json.output) as ConsumerHistory;
    const steps = history.transitions.map((t) => ({
      from: t.from,
      to: t.to,
      by: t.by,
      reason: t.reason,
      recorded: t.recorded,
    }));
    console.log(
      `[history] ${key}:\n${steps.map((s) => `  ${s.from} → ${s.to} by ${s.by}: ${s.reason}${s.recorded ? '' : ' (timeline)'}`).join('\n')}`,
    );
    const wanted = [
      { from: 'pending', to: 'applying', by: 'desired' },
      { to: 'held', by: 'desired' },
      { from: 'held', to: 'lost', by: 'check', reason: 'missing: the backend has no such ACL user', recorded: false },
      { from: 'lost', to: 'held', by: 'heal', reason: 'applied again', recorded: false },
      { from: 'held', to: 'applying', by: 'check', reason: 'grant secret rotated' },
      { to: 'held', by: 'check' },
      { from: 'held', to: 'suspended', by: 'command', reason: 'suspended by an operator' },
    ];
    const matches = (a: (typeof steps)[number], b: Record<string, unknown>) =>
      Object.entries(b).every(
        ([k, v]) =>
          (a as Record<string, unknown>)[k] === v || (k === 'reason' && String(a.reason).startsWith(String(v))),
      );
    expect(inOrder(steps, wanted, matches)).toBe(true);
    expect(history.transitions.map((t) => t.at)).toEqual([...history.transitions.map((t) => t.at)].sort());
    expect(history).toMatchObject({
      consumer: key,
      state: 'suspended',
      reach: { recordKeeps: 20, timelineRead: true, recordFull: false },
    });
    expect(history.reach.words).toContain('the record keeps its last 20 transitions');

    // the text: a headline, how far back, one line per transition (a node column where a line names one: the cache's
    // restart, a node event, is in the history too)
    const text = await holdfastOnce(['history', key, '-c', config]);
    expect(text.code).toBe(0);
    const lines = text.output.split('\n');
    expect(lines[0]).toBe(`${key}: suspended since ${history.stateSince}`);
    expect(lines[1]).toBe(`${history.transitions.length} transitions, oldest first; ${history.reach.words}`);
    expect(
      lines.some((l) =>
        /^\S+ {2}held → lost\s+check\s+(?:\S+\s+)?missing: the backend has no such ACL user \(not written to the record: from the timeline\)$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(text.output).not.toContain(subject!.password);
    // --since leaves out what came before
    const recent = JSON.parse(
      (await holdfastOnce(['history', key, '-c', config, '--json', '--since', '1ms'])).output,
    ) as ConsumerHistory;
    expect(recent.transitions).toEqual([]);

    // the endpoint: the same JSON, behind the dashboard's auth
    const auth = { username: 'holdfast', password: 'board-password-long' };
    const server = await f.httpServer(engine, undefined, { auth });
    try {
      const refused = await get(server.url, `/consumers/${key}/history`);
      expect(refused.status).toBe(401);
      expect(refused.body).not.toContain('suspended');
      const wrong = await get(server.url, `/consumers/${key}/history`, 'holdfast:not-the-password');
      expect(wrong.status).toBe(401);
      const served = await get(server.url, `/consumers/${key}/history`, `${auth.username}:${auth.password}`);
      expect(served.status).toBe(200);
      expect(JSON.parse(served.body)).toEqual(history);
      for (const path of [
        '/consumers/../x/history',
        '/consumers/cache/%1B%5B31mred/history',
        `/consumers/cache/${'x'.repeat(300)}/history`,
        '/consumers/cache/a/b/history',
        '/consumers/cache/%E2%80%AEx/history',
      ]) {
        const bad = await get(server.url, path, `${auth.username}:${auth.password}`);
        expect(bad.status, path).toBe(400);
        expect((JSON.parse(bad.body) as { error: { code: string } }).error.code, path).toBe('CONSUMER_KEY_INVALID');
        expect(bad.body, path).not.toMatch(CONTROL);
      }
      expect(
        (await get(server.url, '/consumers/cache/nobody/history', `${auth.username}:${auth.password}`)).status,
      ).toBe(404);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('refuses a bad key on the command line, clearly, before reading anything, never echoing a control character', async () => {
    const f = await fixture({ consumers: 1 });
    const config = join(f.dir, 'holdfast.yaml');
    for (const given of ['../x', 'cache/\u001b[31mred\u0007', `cache/${'x'.repeat(300)}`, 'cache/\u202ex']) {
      const { code, output } = await holdfastOnce(['history', given, '-c', config]);
      expect(code, JSON.stringify(given)).toBe(2);
      expect(output, JSON.stringify(given)).toMatch(
        /^holdfast: .*; a consumer key is <provider>\/<id>, each 1 to 128 letters, digits, _ \. or -, starting with a letter or digit \[CONSUMER_KEY_INVALID\]\n$/,
      );
      expect(output.replace(/\n$/, '')).not.toMatch(CONTROL);
    }
    const unknown = await holdfastOnce(['history', 'cache/nobody', '-c', config]);
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain(
      'no consumer cache/nobody: not declared, or its first apply has not been written yet [CONSUMER_UNKNOWN]',
    );
  }, 60_000);
});

/**
 * A PostgreSQL provider through the engine, its applies blocked and its admin connection cut:
 * an apply that waits on a lock another session holds is ended on the server at each deadline
 * (`checkTimeout`), the admin connection terminated while it waits fails that apply alone (the
 * process lives, no error escapes it), and the provider's other consumers are checked all along.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { engineFixtures, type Consumer } from './engine-fixture.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function admin(b: BackendEndpoint, name: string): Promise<pg.Client> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: b.admin.username,
    password: b.admin.password,
    database: 'postgres',
    application_name: name,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('a PostgreSQL provider: an apply blocked on a lock, its connection cut', () => {
  const fixture = engineFixtures();
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  beforeAll(() => {
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
  });
  afterAll(() => {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
  });

  it('the apply ends on the server at each deadline, a terminated connection fails that apply alone, and the others are checked throughout', async () => {
    const provider = sharedBackend('postgres');
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider,
      consumers: 4,
      timing: { verifyEvery: '2s', checkTimeout: '2s', retryBase: '200ms', deepCheckEvery: '4s' },
    });
    const engine = await f.startHeld();
    const [blocked, ...others] = f.consumers as [Consumer, ...Consumer[]];
    const dba = await admin(provider, `dba${f.tag}`);
    const watcher = await admin(provider, `watch${f.tag}`);
    /** holdfast's sessions at work on the blocked role, with how long their statement has run. */
    const working = async () =>
      (
        await watcher.query<{ pid: number; wait: string | null; ms: number }>(
          "SELECT pid, wait_event_type AS wait, (extract(epoch FROM clock_timestamp() - query_start) * 1000)::int AS ms FROM pg_stat_activity WHERE application_name = 'holdfast' AND state <> 'idle' AND query LIKE '%' || $1 || '%'",
          [blocked.login],
        )
      ).rows;
    try {
      await dba.query(`BEGIN; ALTER ROLE "${blocked.login}" CONNECTION LIMIT 7`);
      await engine.queue.send(blocked.key, { type: 'REAPPLY' });
      await f.until('the apply waits on the lock', async () => (await working()).some((s) => s.wait === 'Lock'));

      // item 3: its admin connection terminated while it waits
      const [waiting] = await working();
      await watcher.query('SELECT pg_terminate_backend($1)', [waiting!.pid]);
      const cutAt = Date.now();

      // item 2: retried, each apply ends on the server at its deadline (2 s): none runs much longer, and never two at
      // once
      let longest = 0;
      let most = 0;
      while (Date.now() - cutAt < 7_000) {
        const now = await working();
        most = Math.max(most, now.length);
        for (const s of now) longest = Math.max(longest, s.ms);
        await pause(100);
      }
      expect(most).toBeLessThanOrEqual(1);
      expect(longest).toBeLessThan(2_000 + 3_000); // generous: the deadline, and the time to end the session on a loaded machine

      // the other consumers were checked after the cut, and are held
      const status = await f.status();
      for (const c of others) {
        const shown = status.consumers.find((s) => s.consumer === c.key)!;
        expect(shown.state, c.key).toBe('held');
        expect(Date.parse(shown.lastCheck!.at), `${c.key} checked after the cut`).toBeGreaterThan(cutAt);
      }

      // the lock let go: the blocked consumer is applied and held again
      await dba.query('ROLLBACK');
      await f.until('every consumer held', () => f.allHeld(), 30_000);
      expect(await f.canLogin(blocked)).toBe(true);
      await pause(2_500); // a moment after its last apply, nothing of it still runs on the server
      expect(await working()).toEqual([]);
      expect(uncaught.map(String)).toEqual([]);
    } finally {
      await dba.query('ROLLBACK').catch(() => undefined);
      await dba.end();
      await watcher.end();
    }
  });
});

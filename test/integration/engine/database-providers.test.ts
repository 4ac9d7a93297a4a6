/**
 * End to end through the engine, for a PostgreSQL and a MongoDB provider: a login dropped by
 * hand is created again at the next check and the consumer logs in again; a password changed
 * by hand (as a restore of an older state would) is seen as `password-differs` and healed.
 */
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { engineFixtures, type Consumer, type ProviderKindName } from './engine-fixture.js';

async function pgAdmin(b: BackendEndpoint, statement: string): Promise<void> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: b.admin.username,
    password: b.admin.password,
    database: 'postgres',
  });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function mongoAdmin(b: BackendEndpoint, database: string, command: Record<string, unknown>): Promise<void> {
  const client = new MongoClient(b.url);
  try {
    await client.db(database).command(command);
  } finally {
    await client.close();
  }
}

interface ByHand {
  drop(c: Consumer): Promise<void>;
  changePassword(c: Consumer, password: string): Promise<void>;
}

const cases: Array<[ProviderKindName, (b: BackendEndpoint, tag: string) => ByHand]> = [
  [
    'postgres-roles',
    (b) => ({
      drop: (c) => pgAdmin(b, `DROP OWNED BY "${c.login}"; DROP ROLE "${c.login}"`), // as a DBA would: its grants first
      changePassword: (c, password) => pgAdmin(b, `ALTER ROLE "${c.login}" PASSWORD '${password}'`),
    }),
  ],
  [
    'mongodb-users',
    (b, tag) => ({
      drop: (c) => mongoAdmin(b, `hfu${tag}`, { dropUser: c.login }),
      changePassword: (c, password) => mongoAdmin(b, `hfu${tag}`, { updateUser: c.login, pwd: password }),
    }),
  ],
];

describe.each(cases)('%s through the engine', (kind, byHand) => {
  const fixture = engineFixtures();

  it('re-creates a login dropped by hand within one interval, and heals a password changed by hand (password-differs)', async () => {
    const provider = sharedBackend(kind === 'postgres-roles' ? 'postgres' : 'mongodb');
    const f = await fixture({
      adapterKind: kind,
      provider,
      consumers: 3,
      timing: { verifyEvery: '1s', checkTimeout: '900ms', deepCheckEvery: '4s' },
    });
    await f.startHeld();
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    await f.until('every record settled: checks are light from now on', () => f.settled());
    const [dropped, repassworded] = f.consumers as [Consumer, Consumer];
    const hand = byHand(provider, f.tag);

    const changedAt = Date.now();
    await hand.drop(dropped);
    await hand.changePassword(repassworded, 'older-password-restored');
    expect(await f.canLogin(dropped)).toBe(false);
    expect(await f.canLogin(repassworded)).toBe(false);

    // the next (light) check comes within one interval (1 s ± 5%); it fails, a deep one says why, the apply follows
    const healedIn = await f.until(
      'the dropped and the re-passworded healed',
      async () => (await f.canLogin(dropped)) && (await f.canLogin(repassworded)),
      5_000,
    );
    const said = (c: Consumer) =>
      f
        .logsFor(c)
        .filter((l) => (l.time as number) >= changedAt)
        .map((l) => l.msg);
    expect(
      said(dropped).some((m) => m.startsWith('not held (missing: ')),
      said(dropped).join('\n'),
    ).toBe(true);
    expect(
      said(repassworded).some((m) => m.startsWith('not held (password-differs: ')),
      said(repassworded).join('\n'),
    ).toBe(true);
    expect(healedIn).toBeGreaterThanOrEqual(0);
    expect(await f.canLogin({ ...repassworded, password: 'older-password-restored' })).toBe(false);
    await f.until('every consumer held', () => f.allHeld());
  });
});

describe('a PostgreSQL role that still owns objects, no longer declared', () => {
  const fixture = engineFixtures();

  it('is not dropped: remove refused, said once with the objects, red in the status, not retried until asked', async () => {
    const provider = sharedBackend('postgres');
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider,
      consumers: 2,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    const engine = await f.startHeld();
    const [owner, plain] = f.consumers as [Consumer, Consumer];
    const table = `public.owned_${f.tag}`;
    await pgAdmin(provider, `CREATE TABLE ${table} (id int); ALTER TABLE ${table} OWNER TO "${owner.login}"`);
    try {
      f.writeContributions([]);
      await f.until('one removed, one refused', async () => {
        const states = new Map((await f.status()).consumers.map((c) => [c.consumer, c.state]));
        return (states.get(plain.key) ?? 'removed') === 'removed' && states.get(owner.key) === 'removeRefused';
      });
      await new Promise((r) => setTimeout(r, 1500)); // three intervals: nothing is tried again meanwhile
      const status = await f.status();
      const shown = status.consumers.find((c) => c.consumer === owner.key)!;
      expect(shown).toMatchObject({ state: 'removeRefused', healthy: false, nextAt: null });
      expect(shown.reason).toContain(
        `cannot be dropped because some objects depend on it (owner of table owned_${f.tag})`,
      );
      expect(status.healthy).toBe(false);
      const said = f.logsFor(owner).filter((l) => l.msg.startsWith('remove refused by the backend'));
      expect(said).toHaveLength(1);
      expect(await f.canLogin(owner)).toBe(true); // the role is kept
      expect(await f.canLogin(plain)).toBe(false);

      // someone acts on the backend, then asks: removed
      await pgAdmin(provider, `DROP TABLE ${table}`);
      await engine.queue.send(owner.key, { type: 'REAPPLY' });
      await f.until(
        'removed once asked',
        async () =>
          ((await f.status()).consumers.find((c) => c.consumer === owner.key)?.state ?? 'removed') === 'removed',
      );
      expect(await f.canLogin(owner)).toBe(false);
    } finally {
      await pgAdmin(provider, `DROP TABLE IF EXISTS ${table}`);
    }
  });
});

describe('a PostgreSQL role of the same name that holdfast did not make', () => {
  const fixture = engineFixtures();

  it('is left alone: apply refused, said once, red in the status, not retried until asked', async () => {
    const provider = sharedBackend('postgres');
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider,
      consumers: 2,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    const [taken, other] = f.consumers as [Consumer, Consumer];
    await pgAdmin(provider, `CREATE ROLE "${taken.login}" LOGIN PASSWORD 'somebody-elses-password'`);
    try {
      const engine = await f.start();
      await f.until('one held, one refused', async () => {
        const states = new Map((await f.status()).consumers.map((c) => [c.consumer, c.state]));
        return states.get(other.key) === 'held' && states.get(taken.key) === 'applyRefused';
      });
      await new Promise((r) => setTimeout(r, 1500)); // three intervals, many retry bases: nothing is tried again meanwhile
      const status = await f.status();
      expect(status.consumers.find((c) => c.consumer === taken.key)).toMatchObject({
        state: 'applyRefused',
        healthy: false,
        nextAt: null,
      });
      expect(status.healthy).toBe(false);
      const refused = f.logsFor(taken).filter((l) => l.msg.startsWith('apply refused by the backend'));
      expect(refused).toHaveLength(1);
      // not retried once refused (an apply that missed its deadline before, on a loaded machine, was retried: that is
      // not a refusal)
      expect(
        f.logsFor(taken).filter((l) => l.msg.includes('apply failed') && Number(l.time) >= Number(refused[0]!.time)),
      ).toEqual([]);
      expect(await f.canLogin(taken)).toBe(false); // somebody else's password stays

      // someone acts on the backend, then asks: applied
      await pgAdmin(provider, `DROP ROLE "${taken.login}"`);
      await engine.queue.send(taken.key, { type: 'REAPPLY' });
      await f.until('applied once asked', async () => (await f.allHeld()) && (await f.canLogin(taken)));
    } finally {
      await pgAdmin(provider, `DROP ROLE IF EXISTS "${taken.login}"`).catch(() => undefined);
    }
  });
});

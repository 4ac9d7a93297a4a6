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
  const client = new pg.Client({ host: b.host, port: b.port, user: b.admin.username, password: b.admin.password, database: 'postgres' });
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
    const f = await fixture({ adapterKind: kind, provider, consumers: 3, timing: { verifyEvery: '1s', checkTimeout: '900ms', deepCheckEvery: '4s' } });
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
    const healedIn = await f.until('the dropped and the re-passworded healed', async () => (await f.canLogin(dropped)) && (await f.canLogin(repassworded)), 5_000);
    const said = (c: Consumer) => f.logsFor(c).filter((l) => (l.time as number) >= changedAt).map((l) => l.msg);
    expect(said(dropped).some((m) => m.startsWith('not held (missing: ')), said(dropped).join('\n')).toBe(true);
    expect(said(repassworded).some((m) => m.startsWith('not held (password-differs: ')), said(repassworded).join('\n')).toBe(true);
    expect(healedIn).toBeGreaterThanOrEqual(0);
    expect(await f.canLogin({ ...repassworded, password: 'older-password-restored' })).toBe(false);
    await f.until('every consumer held', () => f.allHeld());
  });
});

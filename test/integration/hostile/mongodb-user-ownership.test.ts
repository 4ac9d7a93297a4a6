/**
 * One MongoDB wire server (FerretDB v1.24 here, a mongod where one runs), users that are not a
 * provider's: made by hand before holdfast, made again by hand after holdfast's was dropped,
 * another provider's, in another provider's database. Each is refused and left as it was (its
 * password still works), unless adopted; a removal or a listing never reaches past the
 * provider's own users, and MongoDB's own databases are refused before anything is sent.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/adapters/adapter.js';
import { MARKS_COLLECTION, MARKS_DATABASE } from '../../../src/adapters/mongodb-users/collection-marks.js';
import {
  MongodbUsersAdapter,
  mongodbUsers,
  type MongodbUsersValues,
} from '../../../src/adapters/mongodb-users/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { sharedBackend } from '../../backends/index.js';
import { mongoLogin } from '../../backends/logins.js';
import { mongoAdminOf, mongoCommand } from './database-admin.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(15_000) });

describe('mongodb-users: a user is changed only by the provider whose mark it carries', () => {
  const b = sharedBackend('mongodb');
  const tag = hex(3);
  const [A, B] = [`ma${tag}`, `mb${tag}`];
  const DB = `hfown${tag}`;
  const made: Array<[string, string]> = [];
  const adapters: MongodbUsersAdapter[] = [];

  const connect = (provider: string, adopt = false) => {
    const adapter = new MongodbUsersAdapter(mongoAdminOf(b), { provider, adopt });
    adapters.push(adapter);
    return adapter;
  };
  const grant = (database = DB, login = `hfo${tag}_${hex(4)}`): Grant<MongodbUsersValues> => {
    made.push([database, login]);
    return { login, password: hex(12), values: mongodbUsers.valuesSchema.parse({ database }) };
  };
  const byHand = (g: Grant<MongodbUsersValues>, password: string) =>
    mongoCommand(b, g.values.database, { createUser: g.login, pwd: password, roles: [] });
  const refusal = async (call: Promise<unknown>): Promise<string> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
    return (error as Error).message;
  };
  const reason = async (adapter: MongodbUsersAdapter, g: Grant<MongodbUsersValues>) => {
    const answer = await adapter.holds(g, within());
    return answer.held ? { reason: 'held', detail: '' } : answer;
  };
  const logsIn = (g: Grant<MongodbUsersValues>, password = g.password) =>
    mongoLogin(b, g.login, password, g.values.database);

  afterAll(async () => {
    for (const adapter of adapters) await adapter.close();
    for (const [database, login] of made) await mongoCommand(b, database, { dropUser: login }).catch(() => undefined);
  });

  it('a user made by hand before holdfast: its apply refused naming the user, its database and the fix; its password still works; not held, not listed; its removal leaves it', async () => {
    const g = grant();
    await byHand(g, 'made-by-hand-1');
    const a = connect(A);

    const message = await refusal(a.create(g, within()));
    expect(message).toContain(
      `user "${g.login}" in database "${DB}" exists but holdfast did not make it for provider "${A}"`,
    );
    expect(message).toContain(`set adopt: true on provider "${A}"`);
    expect(await logsIn(g, 'made-by-hand-1')).toBe(true);
    expect(await logsIn(g)).toBe(false);

    expect(await reason(a, g)).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining('carries no holdfast mark') as unknown,
    });
    expect(await a.list(g.login, within())).toEqual([]);
    await a.remove(g.login, within(), g.values);
    await a.remove(g.login, within()); // without values: every database
    expect(await logsIn(g, 'made-by-hand-1')).toBe(true);
  });

  it("adopt: true takes over a user without a mark: the grant's password, marked as the provider's (held, listed, changed without adopt)", async () => {
    const g = grant();
    await byHand(g, 'made-by-hand-2');
    await connect(A, true).create(g, within());
    expect(await logsIn(g, 'made-by-hand-2')).toBe(false);
    expect(await logsIn(g)).toBe(true);

    const a = connect(A);
    expect(await reason(a, g)).toEqual({ reason: 'held', detail: '' });
    expect(await a.list(g.login, within())).toEqual([g.login]);
    const rotated = { ...g, password: hex(12) };
    await a.create(rotated, within());
    expect(await logsIn(rotated)).toBe(true);
  });

  it("a user dropped by hand and made again by hand is not the provider's any more", async () => {
    const g = grant();
    const a = connect(A);
    await a.create(g, within());
    await mongoCommand(b, DB, { dropUser: g.login });
    await byHand(g, 'made-again-by-hand');
    await refusal(a.create(g, within()));
    expect(await logsIn(g, 'made-again-by-hand')).toBe(true);
    expect(await a.list(g.login, within())).toEqual([]);
  });

  it("two providers making the same new logins at the same moment: for each, one wins, the other is refused (at once or at its next try); the winner's password works", async () => {
    const [a, bee] = [connect(A), connect(B)];
    const pairs = Array.from({ length: 10 }, (_, i) => {
      const g = grant(`hfrace${tag}${i}`, `hfrace${tag}_${hex(4)}`); // a database each: the race is for the login alone
      return [g, { ...g, password: hex(12) }] as const;
    });
    const outcomes = await Promise.all(
      pairs.map(([g, theirs]) => Promise.allSettled([a.create(g, within()), bee.create(theirs, within())])),
    );
    for (const [i, [g, theirs]] of pairs.entries()) {
      const both = outcomes[i]!;
      expect(
        both.filter((o) => o.status === 'fulfilled'),
        JSON.stringify(both.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))),
      ).toHaveLength(1);
      const [winner, loser, winnerAdapter, loserAdapter] =
        both[0].status === 'fulfilled' ? [g, theirs, a, bee] : [theirs, g, bee, a];
      await refusal(loserAdapter.create(loser, within())); // its retry, if the first try only lost the race
      expect(await reason(winnerAdapter, winner)).toEqual({ reason: 'held', detail: '' }); // marked as the winner's
      expect(await logsIn(winner)).toBe(true);
      expect(await logsIn(loser)).toBe(false);
    }
  });

  it("two providers claiming one login: the second refused naming both, adopting or not; the first's password intact; each lists and removes only its own", async () => {
    const g = grant();
    const [a, bee, beeAdopting] = [connect(A), connect(B), connect(B, true)];
    await a.create(g, within());
    const theirs = { ...g, password: hex(12) };

    for (const second of [bee, beeAdopting]) {
      const message = await refusal(second.create(theirs, within()));
      expect(message).toContain(`user "${g.login}" in database "${DB}" exists but it belongs to provider "${A}"`);
      expect(message).toContain(`not to provider "${B}"`);
    }
    expect(await logsIn(g)).toBe(true);
    expect(await logsIn(theirs)).toBe(false);
    expect(await reason(a, g)).toEqual({ reason: 'held', detail: '' });
    expect(await reason(bee, theirs)).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining(`belongs to provider "${A}"`) as unknown,
    });

    expect(await a.list(`hfo${tag}_`, within())).toContain(g.login);
    expect(await bee.list(`hfo${tag}_`, within())).toEqual([]);
    await bee.remove(g.login, within(), g.values);
    await bee.remove(g.login, within());
    expect(await logsIn(g)).toBe(true);
    await a.remove(g.login, within());
    expect(await logsIn(g)).toBe(false);
    expect(await reason(a, g)).toMatchObject({ reason: 'missing' });
  });

  it("a database that holds another provider's users: the second provider makes no user there, whatever the login", async () => {
    const database = `hfshared${tag}`;
    const first = grant(database);
    await connect(A).create(first, within());
    const second = grant(database);
    const message = await refusal(connect(B, true).create(second, within()));
    expect(message).toContain(`database "${database}" holds users of provider "${A}" ("${first.login}")`);
    expect(message).toContain(`provider "${B}" makes no user "${second.login}" there`);
    expect(await reason(connect(B), second)).toMatchObject({ reason: 'missing' });
    expect(await logsIn(first)).toBe(true);
  });

  it("MongoDB's own databases, in any case, are refused before anything is sent", async () => {
    const a = connect(A, true);
    for (const database of ['admin', 'Admin', 'local', 'CONFIG']) {
      made.push([database, `hfo${tag}_own`]);
      const message = await refusal(
        a.create(
          { login: `hfo${tag}_own`, password: hex(12), values: mongodbUsers.valuesSchema.parse({ database }) },
          within(),
        ),
      );
      expect(message).toContain(`the database "${database}" is MongoDB's own`);
      expect(message).toContain('nothing was sent');
    }
    expect(await mongoLogin(b, b.admin.username, b.admin.password, 'admin')).toBe(true);
  });

  it("a create stopped after the user was made but before it was marked is finished by the next apply (FerretDB's marks)", async (context) => {
    if (!b.flavor.startsWith('ferretdb')) return context.skip(); // a mongod marks the user in the createUser itself
    const g = grant();
    const a = connect(A);
    // what a worker killed between the two steps leaves: the name claimed (a pending mark), the user made
    await mongoCommand(b, MARKS_DATABASE, {
      insert: MARKS_COLLECTION,
      documents: [{ _id: `${DB}.${g.login}`, db: DB, user: g.login, provider: A, userId: null }],
    });
    await byHand(g, 'left-by-the-killed-worker');
    await a.create(g, within());
    expect(await logsIn(g)).toBe(true);
    expect(await reason(a, g)).toEqual({ reason: 'held', detail: '' });
    // bound to this user now: made again by hand, it is not the provider's
    await mongoCommand(b, DB, { dropUser: g.login });
    await byHand(g, 'made-again-by-hand');
    await refusal(a.create(g, within()));
  });
});

/**
 * The `mongodb-users` adapter: one user per consumer, in the database its values name, on a
 * small pool of admin connections that at most `maxConcurrentCalls` calls share. A server
 * known to be down (its monitor's last heartbeat failed) is not waited for.
 *
 * MongoDB has no way to create a user from a verifier: `createUser` and `updateUser` carry the
 * password, which the server salts and hashes (use TLS, `mongodb+srv://` or `?tls=true`).
 * Everything else compares SCRAM keys computed here with the ones the server keeps.
 */
import { MongoClient, MongoNetworkError, MongoServerError, MongoServerSelectionError, type Document } from 'mongodb';
import type { Adapter, AdminConnection, CallOptions, Grant, HoldsAnswer, Ownership } from '../adapter.js';
import { BackendCalls, hostOf } from '../backend-calls.js';
import type { Incarnation, IncarnationChange } from '../incarnation.js';
import { IncarnationWatch, incarnationPace } from '../incarnation-watch.js';
import { readMongoRun } from './mongodb-run.js';
import { Remembered } from '../remembered.js';
import { HoldfastError } from '../../errors/holdfast-error.js';
import { mongoSha1Password, prepared, sameKeys, scramKeys, type ScramHash, type ScramKeys } from '../scram.js';
import { sha256Hex } from '../../secrets/sha256.js';
import { Bound } from './command-bound.js';
import { CollectionMarks } from './collection-marks.js';
import { CustomDataMarks } from './custom-data-marks.js';
import { isReservedDatabase, loginProblem } from './policy.js';
import { rolesDifference, type RoleEntry } from './role-set.js';
import { userKey, type ListedUser, type UserMarks, type UserOwner } from './user-marks.js';
import { databaseProblem, type MongodbUsersValues } from './values.js';

export const DEFAULT_MAX_CONCURRENT_CALLS = 4;
const VERIFIED_CACHE = 10_000;

/** Server error codes. */
const USER_NOT_FOUND = 11;
const USER_EXISTS = 51003;
const UNAUTHORIZED = 13;
/** The admin's own authentication failed, or the server is shutting down: it could not be used. */
const UNAVAILABLE_CODES = [18, 91, 189, 11600, 11602];

/** One mechanism's keys as `usersInfo` (showCredentials) and `admin.system.users` show them. */
interface StoredCredential {
  iterationCount: number;
  salt: string;
  storedKey: string;
  serverKey: string;
}

interface UserDocument extends ListedUser {
  roles?: RoleEntry[];
  credentials?: Partial<Record<'SCRAM-SHA-1' | 'SCRAM-SHA-256', StoredCredential>>;
}

const MECHANISMS: ReadonlyArray<['SCRAM-SHA-1' | 'SCRAM-SHA-256', ScramHash]> = [
  ['SCRAM-SHA-256', 'sha256'],
  ['SCRAM-SHA-1', 'sha1'],
];

type PasswordAnswer = { matches: true } | { matches: false; detail: string };

export class MongodbUsersAdapter implements Adapter<MongodbUsersValues> {
  private readonly client: MongoClient;
  private readonly calls: BackendCalls;
  private readonly url: string;
  /** Why the server is known to be down; undefined while up or not yet known. */
  private down: string | undefined;
  /** Whether the server is FerretDB (which grants no roles and keeps no customData); asked once. */
  private ferret: Promise<string | undefined> | undefined;
  /** Whether `admin.system.users` may be read by `_id` (the light check's fast path); asked once. */
  private usersReadable: boolean | undefined;
  /** Digests of (user, password, stored keys) known to match: a check compares text, not PBKDF2. */
  private readonly verified = new Remembered(VERIFIED_CACHE);
  /** The server's incarnation (mongodb-run.ts), read every second once asked; a failed heartbeat marks it silent. */
  private readonly watch: IncarnationWatch;

  constructor(
    admin: AdminConnection,
    private readonly ownership: Ownership,
  ) {
    this.url = admin.url;
    const max = admin.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS;
    this.calls = new BackendCalls({
      adapter: 'mongodb-users',
      where: hostOf(admin.url, 'mongodb'),
      adminSecrets: admin.password === undefined ? [] : [admin.password],
      maxConcurrent: max,
      answered: (error) => error instanceof MongoServerError && !UNAVAILABLE_CODES.includes(Number(error.code)),
    });
    this.client = new MongoClient(admin.url, {
      ...(admin.username === undefined ? {} : { auth: { username: admin.username, password: admin.password ?? '' } }),
      maxPoolSize: max,
      minPoolSize: 0,
      maxIdleTimeMS: 30_000,
      serverSelectionTimeoutMS: 2_000,
      connectTimeoutMS: 5_000,
      heartbeatFrequencyMS: 1_000,
      retryReads: false,
      retryWrites: false,
      appName: 'holdfast',
    });
    const node = hostOf(admin.url, 'mongodb');
    const pace = incarnationPace(admin);
    this.watch = new IncarnationWatch({
      ...pace,
      nodes: () => [node],
      read: (_node, signal) => readMongoRun(this.client.db('admin'), signal, pace.timeoutMs),
    });
    this.client.on('serverHeartbeatFailed', (event) => {
      this.down = this.calls.scrubber.scrub(event.failure.message);
      this.watch.failed(node, 'heartbeat-failed');
    });
    this.client.on('serverHeartbeatSucceeded', () => {
      this.down = undefined;
    });
  }

  /**
   * Creates the user, or changes it when it carries this provider's mark (or none and the
   * provider adopts: it is then marked). A user of another provider or without a mark is
   * refused (`BACKEND_REFUSED`), unchanged; so is a user to be made (or adopted) in a database
   * that holds another provider's users.
   */
  async create(grant: Grant<MongodbUsersValues>, options: CallOptions): Promise<void> {
    const { signal } = options;
    const bound = new Bound(options);
    const { database, roles } = this.checked(grant);
    const what = `the apply of user "${grant.login}" in "${database}"`;
    await this.send(signal, what, [grant.password], async () => {
      const ferret = await this.ferretDb();
      if (ferret !== undefined && roles.length > 0) {
        throw new HoldfastError(
          'BACKEND_REFUSED',
          `mongodb-users: this server is FerretDB ${ferret}, which creates users only without roles; user "${grant.login}" asks for ${roles.join(', ')} (set allowedRoles: [] for this provider)`,
        );
      }
      const db = this.client.db(database);
      const marks = await this.marks();
      const users = await this.usersIn(database, bound);
      const owners = await marks.owners(users);
      const existing = users.find((u) => u.user === grant.login);
      const owner = existing && owners.get(userKey(database, existing.user));
      const ours = owner?.provider === this.ownership.provider;
      if (existing && !ours && (owner !== undefined || !this.ownership.adopt))
        throw this.refusal(grant.login, database, owner);
      if (!ours) this.refuseOthersDatabase(grant.login, database, users, owners); // made or adopted here: a database of its own
      const wanted = roles.map((role) => ({ role, db: database }));
      if (!existing) {
        await marks
          .createMarked(db, { createUser: grant.login, pwd: grant.password, roles: wanted })
          .catch((error: unknown) => {
            if (!(error instanceof MongoServerError && error.code === USER_EXISTS)) throw error;
            throw new HoldfastError(
              'BACKEND_ERROR',
              `mongodb-users: user "${grant.login}" in "${database}" was made by someone else while holdfast made it; looked at again on the next try`,
            );
          });
        return;
      }
      await db.command(bound.command({ updateUser: grant.login, pwd: grant.password, roles: wanted }), { signal });
      if (owner === undefined || owner.pending) await marks.mark(db, existing);
    });
  }

  /**
   * Drops the user where it carries this provider's mark: in the database its values name;
   * without them, in every database that has a user of this name except MongoDB's own
   * (`admin`, `local`, `config`). A user without this provider's mark is left as it is.
   */
  async remove(login: string, options: CallOptions, values?: MongodbUsersValues): Promise<void> {
    const { signal } = options;
    const bound = new Bound(options);
    this.assertLogin(login);
    if (values !== undefined) this.checked({ login, password: '', values });
    await this.send(signal, `the removal of user "${login}"`, [], async () => {
      const marks = await this.marks();
      const found =
        values === undefined
          ? (await this.allUsers(bound)).filter((u) => u.user === login)
          : (await this.usersIn(values.database, bound)).filter((u) => u.user === login);
      const owners = await marks.owners(found);
      for (const user of found.filter(
        (u) => !isReservedDatabase(u.db) && owners.get(userKey(u.db, u.user))?.provider === this.ownership.provider,
      )) {
        try {
          await this.client.db(user.db).command(bound.command({ dropUser: login }), { signal });
        } catch (error) {
          if (!(error instanceof MongoServerError && error.code === USER_NOT_FOUND)) throw error;
        }
        await marks.forget(user.db, login);
      }
    });
  }

  async holds(grant: Grant<MongodbUsersValues>, options: CallOptions): Promise<HoldsAnswer> {
    const { signal } = options;
    const bound = new Bound(options);
    const { database, roles } = this.checked(grant);
    const found = await this.send(
      signal,
      `usersInfo of "${grant.login}" in "${database}"`,
      [grant.password],
      async () => {
        const reply = await this.client
          .db(database)
          .command(bound.command({ usersInfo: { user: grant.login, db: database }, showCredentials: true }), {
            signal,
          });
        const user = ((reply.users as UserDocument[] | undefined) ?? [])[0];
        return user
          ? { user, owner: (await (await this.marks()).owners([user])).get(userKey(database, user.user)) }
          : null;
      },
    );
    if (found === null)
      return {
        held: false,
        reason: 'missing',
        detail: `the backend has no user "${grant.login}" in database "${database}"`,
      };
    const { user, owner } = found;
    if (owner?.provider !== this.ownership.provider) {
      return {
        held: false,
        reason: 'rules-differ',
        detail: `the user exists but ${this.notOwnedWords(owner)}; holdfast will not change it`,
      };
    }
    const password =
      user.credentials && Object.keys(user.credentials).length > 0
        ? await this.comparePassword(grant, user)
        : await this.loginAnswer(grant, signal);
    if (!password.matches) return { held: false, reason: 'password-differs', detail: password.detail };
    const roleDifference = rolesDifference(user.roles ?? [], database, roles);
    return roleDifference === undefined
      ? { held: true }
      : { held: false, reason: 'roles-differ', detail: roleDifference };
  }

  /**
   * The user's document in `admin.system.users`, read by its `_id` (`<db>.<user>`), its keys
   * compared with what this process computed or matched before. Measured
   * (test/bench/check-cost.ts) on FerretDB v1.24 with 1,000 users: 2.9 ms of the server's CPU,
   * against 40 ms for a login and 152 ms for `usersInfo` (FerretDB finds a user by name by
   * decoding every user). Where that collection is not readable, a login as the user.
   */
  async authenticates(grant: Grant<MongodbUsersValues>, options: CallOptions): Promise<boolean> {
    const { signal } = options;
    const bound = new Bound(options);
    const { database } = this.checked(grant);
    if (this.usersReadable !== false) {
      const user = await this.send(signal, `the reading of user "${grant.login}"`, [grant.password], async () => {
        try {
          const found = await this.client
            .db('admin')
            .collection<{ _id: string }>('system.users')
            .findOne({ _id: `${database}.${grant.login}` }, bound.find());
          this.usersReadable = true;
          return found as unknown as UserDocument | null;
        } catch (error) {
          if (!(error instanceof MongoServerError && error.code === UNAUTHORIZED)) throw error;
          this.usersReadable = false; // not permitted: log in instead, from now on
          return undefined;
        }
      });
      if (user === null) return false;
      if (user?.credentials) return (await this.comparePassword(grant, user)).matches;
    }
    return (await this.loginAnswer(grant, signal)).matches;
  }

  async ping(options: CallOptions): Promise<void> {
    const bound = new Bound(options);
    await this.send(options.signal, 'ping', [], () =>
      this.client.db('admin').command(bound.command({ ping: 1 }), { signal: bound.signal }),
    );
  }

  /** The users under `prefix` that carry this provider's mark. */
  async list(prefix: string, options: CallOptions): Promise<string[]> {
    const { signal } = options;
    const bound = new Bound(options);
    return this.send(signal, 'the listing of users', [], async () => {
      const users = (await this.allUsers(bound)).filter((u) => u.user.startsWith(prefix));
      const owners = await (await this.marks()).owners(users);
      return [
        ...new Set(
          users
            .filter((u) => owners.get(userKey(u.db, u.user))?.provider === this.ownership.provider)
            .map((u) => u.user),
        ),
      ].sort();
    });
  }

  /** The server's incarnation: mongod's process id, or FerretDB's pid and start time. */
  incarnations(): ReadonlyMap<string, Incarnation> {
    return this.watch.incarnations();
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    return this.watch.onIncarnation(listener);
  }

  async close(): Promise<void> {
    this.watch.close();
    await this.client.close().catch(() => undefined);
  }

  /** Compares each mechanism's stored keys with the grant's password. */
  private async comparePassword(grant: Grant<MongodbUsersValues>, user: UserDocument): Promise<PasswordAnswer> {
    for (const [mechanism, hash] of MECHANISMS) {
      const stored = user.credentials?.[mechanism];
      if (!stored) continue;
      const key = sha256Hex(
        `${user.db}\u0000${grant.login}\u0000${grant.password}\u0000${mechanism}\u0000${stored.storedKey}\u0000${stored.serverKey}`,
      );
      if (this.verified.has(key)) continue;
      const theirs: ScramKeys = {
        hash,
        iterations: stored.iterationCount,
        salt: Buffer.from(stored.salt, 'base64'),
        storedKey: Buffer.from(stored.storedKey, 'base64'),
        serverKey: Buffer.from(stored.serverKey, 'base64'),
      };
      const password = hash === 'sha1' ? mongoSha1Password(grant.login, grant.password) : prepared(grant.password);
      if (!sameKeys(await scramKeys(hash, password, theirs.salt, theirs.iterations), theirs)) {
        return { matches: false, detail: `the user's ${mechanism} credentials are not the grant's password` };
      }
      this.verified.add(key);
    }
    return { matches: true };
  }

  /** Authenticates as the user on a short-lived connection of its own. */
  private async loginAnswer(grant: Grant<MongodbUsersValues>, signal: AbortSignal): Promise<PasswordAnswer> {
    const probe = new MongoClient(this.url, {
      auth: { username: grant.login, password: grant.password },
      authSource: grant.values.database,
      maxPoolSize: 1,
      serverSelectionTimeoutMS: 2_000,
      connectTimeoutMS: 5_000,
      retryReads: false,
      appName: 'holdfast-check',
    });
    try {
      return await this.send(signal, `a login as "${grant.login}"`, [grant.password], async () => {
        try {
          await probe.db(grant.values.database).command({ ping: 1 });
          return { matches: true };
        } catch (error) {
          if (error instanceof MongoServerError && error.code === 18)
            return { matches: false, detail: "the server refuses the grant's password" };
          throw error;
        }
      });
    } finally {
      void probe.close().catch(() => undefined);
    }
  }

  /** Runs `start` unless the server is known to be down (then at once BACKEND_UNAVAILABLE). */
  private send<T>(signal: AbortSignal, what: string, secrets: readonly string[], start: () => Promise<T>): Promise<T> {
    return this.calls.run(
      signal,
      what,
      secrets,
      () => {
        if (this.down !== undefined) throw this.calls.unavailable(what, this.down);
        return start().catch((error: unknown) => {
          if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError)
            this.down ??= this.calls.scrubber.scrub(error.message);
          throw error;
        });
      },
      [],
    );
  }

  /** The FerretDB version, or undefined for a MongoDB. */
  private ferretDb(): Promise<string | undefined> {
    this.ferret ??= this.client
      .db('admin')
      .command({ buildInfo: 1 })
      .then((info: Document) => (typeof info.ferretdbVersion === 'string' ? info.ferretdbVersion : undefined))
      .catch((error: unknown) => {
        this.ferret = undefined;
        throw error;
      });
    return this.ferret;
  }

  /** Where this server keeps marks: customData on a mongod, a collection of its own on FerretDB. */
  private async marks(): Promise<UserMarks> {
    const ferret = await this.ferretDb();
    return ferret === undefined
      ? new CustomDataMarks(this.ownership.provider)
      : new CollectionMarks(this.client, this.ownership.provider);
  }

  /** Every user of every database. */
  private async allUsers(bound: Bound): Promise<ListedUser[]> {
    const reply = await this.client
      .db('admin')
      .command(bound.command({ usersInfo: { forAllDBs: true } }), { signal: bound.signal });
    return (reply.users as ListedUser[] | undefined) ?? [];
  }

  /** The users of one database. */
  private async usersIn(database: string, bound: Bound): Promise<ListedUser[]> {
    const reply = await this.client.db(database).command(bound.command({ usersInfo: 1 }), { signal: bound.signal });
    return ((reply.users as ListedUser[] | undefined) ?? []).filter((u) => u.db === database);
  }

  /**
   * Refuses a database that holds another provider's users: a consumer whose id (or login)
   * names another provider's database gets no user there.
   */
  private refuseOthersDatabase(
    login: string,
    database: string,
    users: readonly ListedUser[],
    owners: ReadonlyMap<string, UserOwner>,
  ): void {
    const others = users
      .map((u) => ({ user: u.user, owner: owners.get(userKey(database, u.user)) }))
      .filter((u) => u.owner !== undefined && u.owner.provider !== this.ownership.provider);
    if (others.length === 0) return;
    const providers = [...new Set(others.map((o) => `"${o.owner?.provider}"`))].join(', ');
    throw new HoldfastError(
      'BACKEND_REFUSED',
      `mongodb-users: database "${database}" holds users of provider ${providers} (${others.map((o) => `"${o.user}"`).join(', ')}); provider "${this.ownership.provider}" makes no user "${login}" there (give this consumer a database of its own)`,
    );
  }

  private notOwnedWords(owner: UserOwner | undefined): string {
    return owner === undefined
      ? `holdfast did not make it for provider "${this.ownership.provider}" (it carries no holdfast mark)`
      : `it belongs to provider "${owner.provider}" (its holdfast mark), not to provider "${this.ownership.provider}"`;
  }

  private refusal(login: string, database: string, owner: UserOwner | undefined): HoldfastError {
    const fix =
      owner === undefined
        ? `drop that user, give this consumer another login, or set adopt: true on provider "${this.ownership.provider}" to take it over`
        : `give this consumer another login, or remove it from provider "${owner.provider}" first`;
    return new HoldfastError(
      'BACKEND_REFUSED',
      `mongodb-users: user "${login}" in database "${database}" exists but ${this.notOwnedWords(owner)}; it is not changed (${fix})`,
    );
  }

  /** Refuses, before anything is sent, a login or a database holdfast does not use. */
  private checked(grant: Grant<MongodbUsersValues>): MongodbUsersValues {
    this.assertLogin(grant.login);
    const database = grant.values.database;
    const problem =
      databaseProblem(database) ??
      (isReservedDatabase(database) ? "is MongoDB's own; no consumer's user is made there" : undefined);
    if (problem)
      throw new HoldfastError(
        'BACKEND_REFUSED',
        `mongodb-users: the database "${database}" ${problem}; nothing was sent`,
      );
    return grant.values;
  }

  private assertLogin(login: string): void {
    const problem = loginProblem(login);
    if (problem)
      throw new HoldfastError('BACKEND_REFUSED', `mongodb-users: the login "${login}" ${problem}; nothing was sent`);
  }
}

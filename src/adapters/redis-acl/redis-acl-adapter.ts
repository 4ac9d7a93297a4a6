/**
 * The `redis-acl` adapter: one admin connection per provider, ACL users per consumer.
 * Every call is raced against its AbortSignal; a connection known to be down fails fast.
 * The admin connection pipelines automatically: the calls of concurrent jobs (a heal of many
 * consumers at once) go to Redis together, many `ACL SETUSER`s per round trip, each sent only
 * after its own job wrote its record.
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type {
  Adapter,
  AdminConnection,
  CallOptions,
  Each,
  Grant,
  HoldsAnswer,
  LoginSession,
  Ownership,
} from '../adapter.js';
import { BackendCalls, hostOf } from '../backend-calls.js';
import { HoldfastError, isHoldfastError } from '../../errors/holdfast-error.js';
import { compareUser, MISSING_USER, namesUnknown, type ExpectedUser } from './acl-compare.js';
import { effectiveCommands, parseGetUser, userRules, type AclUser } from './acl-rules.js';
import { COMMAND_TABLE_QUERY, parseCommandTable, type CommandTable } from './command-table.js';
import { ownedBy } from '../claim-login.js';
import { claimProblem, ownersOf, SCRATCH_PREFIX } from './ownership.js';
import { DEFAULT_DENIED_COMMANDS } from './policy.js';
import { sha256Hex } from '../../secrets/sha256.js';
import { clientAddress, sessionsOfClientList } from './client-list.js';
import type { RedisAclValues } from './values.js';
import { AclLogCursor } from './acl-log-cursor.js';
import { authEntries } from './acl-log.js';
import type { FailedLoginsRead } from '../login-failures.js';

export interface RedisAclAdapterOptions {
  /** The provider's deny list, applied after every consumer's rules (default the policy's default). */
  deniedCommands?: readonly string[] | undefined;
  /**
   * Command rules every consumer gets after the deny list (a Cluster's nodes: `+cluster|slots
   * +cluster|info`, what a cluster-aware client needs to start); default none.
   */
  grantedCommands?: readonly string[] | undefined;
  /** Where this node is, as `host:port`, for messages (default the admin URL's host). */
  where?: string | undefined;
}

/**
 * How {@link RedisAclAdapter.create} went: `applied` (sent), or `held` (asked to skip a node that holds it already, and
 * it did).
 */
export type CreateOutcome = 'applied' | 'held';

/**
 * A table older than this is read again when a user's rules name a command it lacks (a module loaded since); a
 * younger one is not, so such a user costs one read a minute at most.
 */
const STALE_TABLE_MS = 60_000;

/** How many `ACL GETUSER`s a listing sends at once (each costs Redis up to ~1.5 ms). */
const LIST_BATCH = 32;

/** The error code a Redis error reply starts with (`ERR`, `WRONGPASS`, `NOPERM`…); undefined for other errors. */
function replyCode(error: unknown): string | undefined {
  return error instanceof Error && error.name === 'ReplyError' ? error.message.split(' ', 1)[0] : undefined;
}

/** What an `AUTH` the server refused (`WRONGPASS`) answers. */
const REFUSED = Symbol('refused');

/** {@link REFUSED} for a `WRONGPASS` reply; any other error thrown as it is. */
function wrongPassword(error: unknown): typeof REFUSED {
  if (replyCode(error) === 'WRONGPASS') return REFUSED;
  throw error;
}

export class RedisAclAdapter implements Adapter<RedisAclValues> {
  private readonly client: Redis;
  /**
   * Light checks authenticate as the consumer here, never on the admin connection; it holds no credentials of its own.
   */
  private readonly prober: Redis;
  /** While the probe connection comes back: what the light checks meanwhile wait for (one listener for all). */
  private proberReady: Promise<void> | undefined;
  /**
   * Whether an AUTH succeeded on the probe connection since it (re)connected: Redis then buffers its replies without
   * the unauthenticated bound.
   */
  private proberAuthenticated = false;
  /** Deadlines, error mapping and scrubbing (it knows the admin password). */
  private readonly calls: BackendCalls;
  /** Why the connection is known to be down; undefined while up or still making its first attempt. */
  private down: string | undefined;
  /** The first connection attempt: calls made meanwhile wait for it. */
  private readonly firstAttempt: Promise<void>;
  /** Whether the server has an ACL file; asked once per connection. */
  private aclFile: boolean | undefined;
  /**
   * The server's command table, read once per connection (a restarted server is a new connection): what command
   * rules are evaluated against. Undefined until a deep check needs it.
   */
  private table: Promise<CommandTable> | undefined;
  /** The table {@link table} resolved to, once it did. */
  private current: CommandTable | undefined;
  private tableReads = 0;
  private tableReadAt = 0;
  /** The next `ACL SAVE`, not started yet: callers arriving now share it. */
  private saveQueued: Promise<void> | undefined;
  private saveRunning: Promise<void> = Promise.resolve();
  private readonly denied: readonly string[];
  private readonly granted: readonly string[];
  /** Logins never a consumer's, adopt or not: Redis's `default` and the admin's own. */
  private readonly never: ReadonlySet<string>;
  private pipelines = 0;
  /** Where this node's `ACL LOG` was last read, and how many entries it keeps (`acllog-max-len`, read once). */
  private readonly aclLog = new AclLogCursor();
  private aclLogLength: number | undefined;
  private readonly where: string;

  constructor(
    admin: AdminConnection,
    private readonly ownership: Ownership,
    options: RedisAclAdapterOptions = {},
  ) {
    this.calls = new BackendCalls({
      adapter: 'redis-acl',
      where: options.where ?? hostOf(admin.url, 'redis'),
      adminSecrets: admin.password === undefined ? [] : [admin.password],
      // a reply other than NOAUTH/WRONGPASS is the server's answer; anything else could not reach it
      answered: (error) => {
        const code = replyCode(error);
        return code !== undefined && code !== 'NOAUTH' && code !== 'WRONGPASS';
      },
    });
    this.where = options.where ?? hostOf(admin.url, 'redis');
    this.denied = options.deniedCommands ?? DEFAULT_DENIED_COMMANDS;
    this.granted = options.grantedCommands ?? [];
    this.never = new Set(['default', admin.username ?? 'default']);
    this.client = new Redis(admin.url, {
      // concurrent consumers' calls (a heal's ACL GETUSERs and SETUSERs) share one write and one read
      enableAutoPipelining: true,
      username: admin.username,
      password: admin.password,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 5_000,
      retryStrategy: (attempt: number) => Math.min(100 * 2 ** (attempt - 1), 2_000),
    });
    this.client.on('error', (error: Error) => {
      this.down = this.calls.scrubber.scrub(error.message);
    });
    this.client.on('close', () => {
      this.down ??= 'the connection closed';
    });
    this.client.on('ready', () => {
      this.down = undefined;
      this.aclFile = undefined;
      // a restarted server may be another version, with other commands
      [this.table, this.current] = [undefined, undefined];
    });
    this.prober = new Redis(admin.url, {
      enableAutoPipelining: true, // concurrent checks' AUTHs share one write
      enableReadyCheck: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 5_000,
      retryStrategy: (attempt: number) => Math.min(100 * 2 ** (attempt - 1), 2_000),
    });
    this.prober.on('error', () => undefined);
    // a new connection is unauthenticated: Redis 7.0 bounds what it buffers for it (failed AUTHs' replies)
    this.prober.on('ready', () => {
      this.proberAuthenticated = false;
    });
    this.firstAttempt = new Promise<void>((resolve, reject) => {
      this.client.once('ready', () => resolve());
      this.client.once('close', () => reject(new Error(this.down ?? 'the connection closed')));
    });
    this.firstAttempt.catch(() => undefined);
  }

  /** How many times this node's command table was read (once per connection, and again when found stale). */
  get commandTableReads(): number {
    return this.tableReads;
  }

  /**
   * One `ACL GETUSER` first: a login that exists without this provider's mark is refused
   * (`BACKEND_REFUSED`, nothing sent) unless the provider adopts; during a rotation's overlap
   * the same reply gives the passwords to keep.
   *
   * The read is made right before the `ACL SETUSER`, even when the check that found the login
   * missing has just read it: Redis has no create-if-absent for ACL users (`ACL` may not run in a
   * script or a function, `MULTI` runs every command it queued whatever an earlier one answered,
   * `WATCH` watches keys, and no `ACL SETUSER` rule fails on a user merely existing), so a login
   * made by someone else after the check would otherwise be overwritten
   * (`test/integration/adapters/redis-acl-claim-race.test.ts`). For a login that does not exist
   * it costs the server next to nothing.
   */
  async create(grant: Grant<RedisAclValues>, { signal }: CallOptions): Promise<void> {
    await this.apply(grant, signal, false);
  }

  /**
   * {@link create}, or, with `skipIfHeld`, nothing when this node holds the grant already (the
   * same `ACL GETUSER` read compared, as {@link holds} would): a heal of one node of several
   * sends nothing to the others.
   */
  async apply(grant: Grant<RedisAclValues>, signal: AbortSignal, skipIfHeld: boolean): Promise<CreateOutcome> {
    const hash = sha256Hex(grant.password);
    const secrets = [grant.password, hash];
    const existing = await this.getUser(grant.login, signal, secrets);
    const problem = claimProblem(grant.login, existing, this.ownership, this.never);
    if (problem !== undefined) throw new HoldfastError('BACKEND_REFUSED', `redis-acl: ${problem}; nothing was sent`);
    const { keys, channels } = grant.values;
    const commands = this.rulesOf(grant.values);
    if (skipIfHeld && existing !== null) {
      const answer = await this.compare(existing, this.expected(grant, hash), signal, secrets);
      if (answer.held) return 'held';
    }
    const kept = grant.keepPasswords ? (existing?.passwords ?? []) : [];
    const rules = userRules({
      passwordHash: hash,
      keptHashes: kept,
      keys,
      channels,
      commands,
      owner: this.ownership.provider,
    });
    await this.send(signal, `ACL SETUSER "${grant.login}"`, [...secrets, ...kept], () =>
      this.client.call('ACL', ['SETUSER', grant.login, ...rules]),
    );
    await this.saveIfAclFile(signal, secrets);
    return 'applied';
  }

  /**
   * {@link apply} for several grants (distinct logins) in two round trips: one pipeline of
   * `ACL GETUSER`s, then one of the `ACL SETUSER`s to send (and one `ACL SAVE` where the node
   * has an ACL file). Each grant's outcome is its own: one refused (a login not this provider's)
   * or answered with an error fails alone. Throws only when nothing could be asked.
   */
  async applyMany(
    grants: ReadonlyArray<Grant<RedisAclValues>>,
    signal: AbortSignal,
    skipIfHeld: boolean,
  ): Promise<Array<Each<CreateOutcome>>> {
    const hashes = grants.map((g) => sha256Hex(g.password));
    const secrets = grants.flatMap((g, i) => [g.password, hashes[i]!]);
    const existing = await this.getUsers(
      grants.map((g) => g.login),
      signal,
      secrets,
    );
    // the command table, awaited once for the batch, and only where a user exists to compare
    const table = skipIfHeld ? await this.tableForEach(existing, signal, secrets) : undefined;
    const planned = grants.map((grant, i) => this.plan(grant, hashes[i]!, existing[i]!, table));
    const out: Array<Each<CreateOutcome>> = planned.map((p) =>
      p.ok && p.value === 'held' ? { ok: true, value: 'held' } : p.ok ? { ok: true, value: 'applied' } : p,
    );
    const sending = planned.flatMap((p, i) => (p.ok && p.value !== 'held' ? [{ i, rules: p.value }] : []));
    if (sending.length === 0) return out;
    const all = [
      ...secrets,
      ...sending.flatMap((s) => s.rules.filter((r) => r.startsWith('#')).map((r) => r.slice(1))),
    ];
    const fail = (i: number, error: unknown) => (out[i] = { ok: false, error });
    try {
      const replies = await this.send(signal, `ACL SETUSER of ${sending.length} logins`, all, () =>
        this.pipelined(sending.map(({ i, rules }) => ['ACL', 'SETUSER', grants[i]!.login, ...rules])),
      );
      sending.forEach(({ i }, j) => {
        const error = replies[j]?.[0];
        if (error) fail(i, this.calls.failure(error, `ACL SETUSER "${grants[i]!.login}"`, all));
      });
      await this.saveIfAclFile(signal, secrets);
    } catch (error) {
      for (const { i } of sending) if (out[i]!.ok) fail(i, error);
    }
    return out;
  }

  /** {@link holds} for several grants in one round trip (a pipeline of `ACL GETUSER`s); each answer its own. */
  async holdsMany(
    grants: ReadonlyArray<Grant<RedisAclValues>>,
    { signal }: CallOptions,
  ): Promise<Array<Each<HoldsAnswer>>> {
    const hashes = grants.map((g) => sha256Hex(g.password));
    const secrets = grants.flatMap((g, i) => [g.password, hashes[i]!]);
    const users = await this.getUsers(
      grants.map((g) => g.login),
      signal,
      secrets,
    );
    const table = await this.tableForEach(users, signal, secrets);
    return grants.map((grant, i): Each<HoldsAnswer> => {
      const user = users[i]!;
      if (!user.ok) return user;
      if (user.value === null) return { ok: true, value: MISSING_USER };
      if (table === undefined || !table.ok) return table ?? { ok: false, error: new Error('no command table') };
      try {
        return { ok: true, value: compareUser(user.value, this.expected(grant, hashes[i]!), table.value) };
      } catch (error) {
        return { ok: false, error };
      }
    });
  }

  /** What `grant` should look like on this node. */
  private expected(grant: Grant<RedisAclValues>, passwordHash: string): ExpectedUser {
    return {
      passwordHash,
      othersAccepted: grant.keepPasswords === true,
      keys: grant.values.keys,
      channels: grant.values.channels,
      rules: this.rulesOf(grant.values),
      asked: grant.values.commands,
      owner: this.ownership.provider,
    };
  }

  /**
   * {@link compareUser} on this node's command table. A user whose rules name a command the table lacks (a module
   * loaded since it was read) has the table read again, once.
   */
  private async compare(
    user: AclUser | null,
    expected: ExpectedUser,
    signal: AbortSignal,
    secrets: readonly string[],
  ): Promise<HoldsAnswer> {
    return compareUser(user, expected, await this.tableFor([user], signal, secrets));
  }

  /**
   * The command table to compare `users` on, awaited once for them all: this connection's, read again (once) when a
   * user's rules name a command it lacks and it is older than {@link STALE_TABLE_MS}.
   */
  private async tableFor(
    users: ReadonlyArray<AclUser | null>,
    signal: AbortSignal,
    secrets: readonly string[],
  ): Promise<CommandTable> {
    const table = this.current ?? (await this.commandTable(signal, secrets));
    const stale = Date.now() - this.tableReadAt >= STALE_TABLE_MS;
    if (!stale || !users.some((user) => user !== null && namesUnknown(user.commands, table))) return table;
    if (this.current === table) [this.table, this.current] = [undefined, undefined];
    return this.commandTable(signal, secrets);
  }

  /**
   * {@link tableFor} the users read, or why it could not be read (each grant that needs it fails alone); undefined
   * (nothing awaited) when none of them exists.
   */
  private async tableForEach(
    read: ReadonlyArray<Each<AclUser | null>>,
    signal: AbortSignal,
    secrets: readonly string[],
  ): Promise<Each<CommandTable> | undefined> {
    const users = read.flatMap((r) => (r.ok && r.value !== null ? [r.value] : []));
    if (users.length === 0) return undefined;
    try {
      return { ok: true, value: await this.tableFor(users, signal, secrets) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * This connection's command table: read once (`COMMAND` and `ACL CAT`, one round trip), shared by every check;
   * each caller waits for it under its own deadline.
   */
  private commandTable(signal: AbortSignal, secrets: readonly string[]): Promise<CommandTable> {
    return this.send(signal, 'COMMAND and ACL CAT (the command table)', secrets, () => this.tableRead());
  }

  private tableRead(): Promise<CommandTable> {
    if (this.table === undefined) {
      this.tableReads += 1;
      this.tableReadAt = Date.now();
      const read = Promise.all(
        COMMAND_TABLE_QUERY.map(([command, ...args]) => this.client.call(command, ...args)),
      ).then(([commands, categories]) => parseCommandTable(commands, categories));
      this.table = read;
      read.then(
        (table) => {
          if (this.table === read) this.current = table;
        },
        () => {
          if (this.table === read) this.table = undefined; // read again by the next check
        },
      );
    }
    return this.table;
  }

  /**
   * What one grant of {@link applyMany} sends (its `ACL SETUSER` rules), `held` when nothing (`table` given: the batch
   * skips a node that holds it already; the table's read failing fails the grants that needed it), or why it is
   * refused.
   */
  private plan(
    grant: Grant<RedisAclValues>,
    hash: string,
    existing: Each<AclUser | null>,
    table: Each<CommandTable> | undefined,
  ): Each<string[] | 'held'> {
    if (!existing.ok) return existing;
    const user = existing.value;
    const problem = claimProblem(grant.login, user, this.ownership, this.never);
    if (problem !== undefined)
      return { ok: false, error: new HoldfastError('BACKEND_REFUSED', `redis-acl: ${problem}; nothing was sent`) };
    const { keys, channels } = grant.values;
    const commands = this.rulesOf(grant.values);
    if (table !== undefined && user !== null) {
      if (!table.ok) return table;
      try {
        if (compareUser(user, this.expected(grant, hash), table.value).held) return { ok: true, value: 'held' };
      } catch (error) {
        return { ok: false, error };
      }
    }
    const kept = grant.keepPasswords ? (user?.passwords ?? []) : [];
    return {
      ok: true,
      value: userRules({
        passwordHash: hash,
        keptHashes: kept,
        keys,
        channels,
        commands,
        owner: this.ownership.provider,
      }),
    };
  }

  /** How many explicit pipelines (batch calls' round trips) this node was sent: what a batch costs in round trips. */
  get pipelinesSent(): number {
    return this.pipelines;
  }

  /** `ACL GETUSER` of each login in one pipeline; each reply its own. */
  private async getUsers(
    logins: readonly string[],
    signal: AbortSignal,
    secrets: readonly string[],
  ): Promise<Array<Each<AclUser | null>>> {
    const replies = await this.send(signal, `ACL GETUSER of ${logins.length} logins`, secrets, () =>
      this.pipelined(logins.map((login) => ['ACL', 'GETUSER', login])),
    );
    return logins.map((login, i): Each<AclUser | null> => {
      const [error, reply] = replies[i] ?? [new Error('no reply'), null];
      if (error) return { ok: false, error: this.calls.failure(error, `ACL GETUSER "${login}"`, secrets) };
      try {
        return { ok: true, value: parseGetUser(reply) };
      } catch (failure) {
        return { ok: false, error: this.calls.failure(failure, `ACL GETUSER "${login}"`, secrets) };
      }
    });
  }

  /** Sends `commands` as one pipeline (one write, one round trip). */
  private async pipelined(commands: ReadonlyArray<readonly string[]>): Promise<Array<[Error | null, unknown]>> {
    this.pipelines += 1;
    const pipeline = this.client.pipeline();
    for (const [command, ...args] of commands) pipeline.call(command!, args);
    const replies = await pipeline.exec();
    if (replies === null) throw new Error('the pipeline was discarded');
    return replies;
  }

  /**
   * One admin command on this node (discovery: `INFO replication`, `CLUSTER NODES`), with the same deadlines and
   * mapping.
   */
  command(signal: AbortSignal, ...args: [string, ...string[]]): Promise<unknown> {
    return this.send(signal, args.join(' '), [], () => this.client.call(...args));
  }

  /** Deletes the login only when it carries this provider's mark; any other is left as it is, and that succeeds. */
  async remove(login: string, { signal }: CallOptions): Promise<void> {
    if (this.never.has(login)) return;
    const existing = await this.getUser(login, signal, []);
    if (existing === null || !ownedBy(ownersOf(existing), this.ownership.provider)) return;
    await this.send(signal, `ACL DELUSER "${login}"`, [], () => this.client.call('ACL', 'DELUSER', login));
    await this.saveIfAclFile(signal, []);
  }

  async holds(grant: Grant<RedisAclValues>, { signal }: CallOptions): Promise<HoldsAnswer> {
    const passwordHash = sha256Hex(grant.password);
    const secrets = [grant.password, passwordHash];
    const actual = await this.getUser(grant.login, signal, secrets);
    return this.compare(actual, this.expected(grant, passwordHash), signal, secrets);
  }

  /**
   * `AUTH <login> <password>` on the probe connection: under a microsecond of the server's
   * CPU, against up to a millisecond for `ACL GETUSER`. Redis closes a connection whose user
   * is deleted or disabled; a check caught by that fails, and is confirmed by a deep one.
   */
  async authenticates(grant: Grant<RedisAclValues>, { signal }: CallOptions): Promise<boolean> {
    const what = `AUTH as "${grant.login}"`;
    const secrets = [grant.password];
    if (signal.aborted) throw this.calls.deadline(what);
    if (this.prober.status !== 'ready') {
      // the server closes it when the user it last authenticated as is deleted: it comes back at once
      if (this.down !== undefined) throw this.calls.unavailable(what, this.down);
      this.proberReady ??= once(this.prober, 'ready')
        .then(
          () => undefined,
          () => undefined, // an error while reconnecting: the check after the wait says what it is
        )
        .finally(() => {
          this.proberReady = undefined;
        });
      await this.calls.race(this.proberReady, signal, what, secrets);
    }
    const auth = this.prober.call('AUTH', grant.login, grant.password).catch(wrongPassword);
    const accepted = (await this.calls.race(auth, signal, what, secrets)) !== REFUSED;
    if (accepted) this.proberAuthenticated = true;
    return accepted;
  }

  /**
   * Whether the probe connection is authenticated (an AUTH succeeded on it since it connected).
   * While it is not, Redis 7.0 closes it when the replies of pipelined failed AUTHs outgrow a
   * small buffer: its caller keeps only a few in flight then.
   */
  get probeAuthenticated(): boolean {
    return this.proberAuthenticated;
  }

  async ping({ signal }: CallOptions): Promise<void> {
    await this.send(signal, 'PING', [], () => this.client.ping());
  }

  /**
   * Tells `listener` each time the admin connection is made (again) and ready, before any other call is sent on it
   * (calls made while it is not ready are refused, not queued). Returns the unsubscribe.
   */
  onConnected(listener: () => void): () => void {
    this.client.on('ready', listener);
    return () => this.client.off('ready', listener);
  }

  /**
   * The logins under `prefix` that carry this provider's mark (and no other's): `ACL USERS`
   * (names only: 1 ms for 10,000 users), then `ACL GETUSER` for each one not in `claimed`, a
   * few at a time. Not `ACL LIST`: it describes every user's rules, which blocks Redis for
   * about 1.5 ms per user (15 s for 10,000).
   */
  async list(prefix: string, { signal }: CallOptions, claimed: ReadonlySet<string> = new Set()): Promise<string[]> {
    const users = await this.send(signal, 'ACL USERS', [], () => this.client.call('ACL', 'USERS'));
    const candidates = (Array.isArray(users) ? users : [])
      .map(String)
      .filter((u) => u.startsWith(prefix) && !u.startsWith(SCRATCH_PREFIX) && !claimed.has(u) && !this.never.has(u));
    const ours: string[] = [];
    for (let i = 0; i < candidates.length; i += LIST_BATCH) {
      const batch = candidates.slice(i, i + LIST_BATCH);
      const read = await Promise.all(batch.map((login) => this.getUser(login, signal, [])));
      batch.forEach((login, j) => {
        const user = read[j];
        if (user && ownedBy(ownersOf(user), this.ownership.provider)) ours.push(login);
      });
    }
    return ours;
  }

  /**
   * This node's failed logins since its last read: one `ACL LOG <acllog-max-len>` (never `ACL LOG RESET`: the log is
   * the operators' too). Failures of holdfast's own light checks (its probe connection's address) are left out.
   */
  async failedLogins({ signal }: CallOptions): Promise<FailedLoginsRead> {
    const length = await this.aclLogLengthOf(signal);
    const reply = await this.send(signal, 'ACL LOG', [], () => this.client.call('ACL', 'LOG', String(length)));
    const probe = this.prober.stream as { localAddress?: string; localPort?: number } | undefined;
    const own = probe?.localPort === undefined ? '' : `${probe.localAddress ?? ''}:${probe.localPort}`;
    const entries = authEntries(reply, Date.now()).filter((e) => e.address !== own);
    const { fresh, lost } = this.aclLog.read(entries, Array.isArray(reply) && reply.length >= length);
    const failures = fresh.map(({ entry, count }) => ({
      login: entry.username,
      address: entry.address,
      count,
      at: entry.lastUpdated,
      node: this.where,
    }));
    return { failures, nodes: [this.where], lost: lost ? [this.where] : [] };
  }

  /** `acllog-max-len`, read once (128, Redis's default, where `CONFIG GET` is not allowed); at most 1024 read. */
  private async aclLogLengthOf(signal: AbortSignal): Promise<number> {
    if (this.aclLogLength !== undefined) return this.aclLogLength;
    const reply = await this.send(signal, 'CONFIG GET acllog-max-len', [], () =>
      this.client.call('CONFIG', 'GET', 'acllog-max-len'),
    ).catch(() => undefined);
    const n = Array.isArray(reply) ? Number(reply[1]) : NaN;
    this.aclLogLength = Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 128;
    return this.aclLogLength;
  }

  /**
   * The connections of `logins` now: one `CLIENT LIST TYPE normal` (every client's line, read once for all the logins
   * asked), less this adapter's probe connection (it authenticates as one consumer after another: its `user=` is
   * whichever it checked last).
   */
  async openConnections(logins: ReadonlySet<string>, { signal }: CallOptions): Promise<LoginSession[]> {
    const reply = await this.send(signal, 'CLIENT LIST TYPE normal', [], () =>
      this.client.call('CLIENT', 'LIST', 'TYPE', 'normal'),
    );
    const probe = clientAddress(this.prober.stream?.localAddress, this.prober.stream?.localPort);
    const own = new Set(probe === undefined ? [] : [probe]);
    return sessionsOfClientList(typeof reply === 'string' ? reply : String(reply), logins, Date.now(), own);
  }

  close(): Promise<void> {
    this.client.disconnect();
    this.prober.disconnect();
    return Promise.resolve();
  }

  /** The consumer's command rules, then the provider's deny list. */
  private rulesOf(values: RedisAclValues): string[] {
    return [...effectiveCommands(values.commands, this.denied), ...this.granted];
  }

  private async getUser(login: string, signal: AbortSignal, secrets: readonly string[]): Promise<AclUser | null> {
    return parseGetUser(
      await this.send(signal, `ACL GETUSER "${login}"`, secrets, () => this.client.call('ACL', 'GETUSER', login)),
    );
  }

  private async saveIfAclFile(signal: AbortSignal, secrets: readonly string[]): Promise<void> {
    if (await this.hasAclFile(signal, secrets)) await this.send(signal, 'ACL SAVE', secrets, () => this.save());
  }

  private async hasAclFile(signal: AbortSignal, secrets: readonly string[]): Promise<boolean> {
    if (this.aclFile !== undefined) return this.aclFile;
    try {
      const reply = await this.send(signal, 'CONFIG GET aclfile', secrets, () =>
        this.client.call('CONFIG', 'GET', 'aclfile'),
      );
      this.aclFile = Array.isArray(reply) && typeof reply[1] === 'string' && reply[1] !== '';
    } catch (error) {
      // CONFIG is not permitted (or renamed away): holdfast cannot know, so it does not save.
      if (!isHoldfastError(error, 'BACKEND_ERROR')) throw error;
      this.aclFile = false;
    }
    return this.aclFile;
  }

  /**
   * `ACL SAVE` rewrites the whole file, so concurrent callers share saves: a caller joins the
   * next save that has not started yet, which runs once the current one is done.
   */
  private save(): Promise<void> {
    if (this.saveQueued === undefined) {
      const queued = this.saveRunning.then(async () => {
        this.saveQueued = undefined;
        await this.client.call('ACL', 'SAVE');
      });
      this.saveQueued = queued;
      this.saveRunning = queued.catch(() => undefined);
    }
    return this.saveQueued;
  }

  /** Runs `start` once the connection is ready, raced against `signal`; errors become HoldfastErrors. */
  private async send<T>(
    signal: AbortSignal,
    what: string,
    secrets: readonly string[],
    start: () => Promise<T>,
  ): Promise<T> {
    return this.calls.run(signal, what, secrets, async () => {
      const { status } = this.client;
      if (status !== 'ready') {
        if (this.down !== undefined || status === 'end' || status === 'close') {
          throw this.calls.unavailable(what, this.down ?? 'the connection is closed');
        }
        await this.firstAttempt; // still making its first attempt
      }
      return start();
    });
  }
}

/**
 * The `postgres-roles` adapter: one role per consumer, created with a SCRAM-SHA-256 verifier
 * computed here (the password never reaches the server or its statement log), on a small
 * pool of admin connections that at most `maxConcurrentCalls` calls share, each call on one
 * connection of its own, ended on the server when its deadline passes (admin-sessions.ts), on
 * the one host or, with `admin.urls`, on the one not in recovery (primary-pool.ts).
 */
import pg from 'pg';
import type {
  Adapter,
  AdminConnection,
  BatchForm,
  CallOptions,
  Each,
  Grant,
  HoldsAnswer,
  LoginSession,
  Ownership,
} from '../adapter.js';
import { BackendCalls, hostOf } from '../backend-calls.js';
import type { Incarnation, IncarnationChange } from '../incarnation.js';
import { IncarnationWatch, incarnationPace } from '../incarnation-watch.js';
import { PostgresRuns } from './postgres-run.js';
import { Remembered } from '../remembered.js';
import { HoldfastError } from '../../errors/holdfast-error.js';
import {
  keyForms,
  newSalt,
  parsePostgresVerifier,
  postgresVerifier,
  prepared,
  sameKeys,
  scramKeys,
  type ScramKeys,
} from '../scram.js';
import { sha256Hex } from '../../secrets/sha256.js';
import { connectionLimitClause, connectionLimitDiffers, DEFAULT_CONNECTION_LIMIT } from './connection-limit.js';
import { loginProblem, withheldRolesOf } from './policy.js';
import { postgresHost, PrimaryPool, type PostgresHost } from './primary-pool.js';
import { notOwnedWords, roleMark, roleOwner, type RoleOwner } from './role-mark.js';
import {
  compareRole,
  ownershipDiffers,
  PRIVILEGED_GROUPS,
  ROLE_ATTRIBUTES,
  roleQuery,
  type PasswordAnswer,
  type RoleRow,
} from './role-state.js';
import { resetRoleSettings, roleSettingsDiffer, withRoleSettings } from './role-settings.js';
import { publicDatabaseGrants, publicSchemaGrants, schemaDatabases, type PublicGrantsScope } from './public-grants.js';
import { identifierProblem, type PostgresRolesValues } from './values.js';
import { groupedStatements, lockObjectRows, objectStatement, type ObjectGrant } from './object-grants.js';
import { existingRoles, newRolesText, privilegedAmong } from './new-roles.js';

export { ACL_ROW_LOCK } from './object-grants.js';

export const DEFAULT_MAX_CONCURRENT_CALLS = 4;
/** PostgreSQL's default SCRAM iteration count (scram_iterations). */
const ITERATIONS = 4096;

/** Roles per transaction of a batch apply (each in its own savepoint). */
export const POSTGRES_BATCH_LIMIT = 32;

/** What a role holds of the grants holdfast makes. */
type Granted = Pick<RoleRow, 'member_of' | 'databases' | 'schemas'>;
const NOTHING_HELD: Granted = { member_of: [], databases: [], schemas: [] };

/** One role's apply, computed before anything is sent. */
interface PreparedRole {
  grant: Grant<PostgresRolesValues>;
  /** The values, checked (`names`). */
  names: PostgresRolesValues;
  verifier: string;
  forms: string[];
}

async function settledOf<T>(work: Promise<T>): Promise<Each<T>> {
  try {
    return { ok: true, value: await work };
  } catch (error) {
    return { ok: false, error };
  }
}
/** `work`'s value or its throw, as an outcome. */
function settledNow<T>(work: () => T): Each<T> {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** How many (role, password, verifier) matches are remembered, so a check need not run PBKDF2 again. */
const VERIFIED_CACHE = 10_000;

/**
 * SQLSTATE classes that mean the server could not be used, not that it answered: connection, resources, shutdown, auth
 * of the admin.
 */
const UNAVAILABLE_CLASSES = ['08', '53', '57', '28'];

/** query_canceled (statement_timeout) and lock_not_available (lock_timeout): the server kept the call's deadline. */
const SERVER_TIMEOUTS = ['57014', '55P03'];
/**
 * read_only_sql_transaction: a write sent to a standby (the primary moved): could not apply, not the server's answer
 * about the role.
 */
const READ_ONLY = '25006';

interface DatabaseError {
  code: string;
  detail?: string;
}

function sqlState(error: unknown): string | undefined {
  const code = (error as Partial<DatabaseError> | null)?.code;
  return error instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** What the server said, with its DETAIL (which names objects, never a password). */
function serverSaid(error: unknown): string {
  const detail = (error as Partial<DatabaseError>).detail;
  return `${error instanceof Error ? error.message : String(error)}${detail ? ` (${detail.replaceAll('\n', '; ')})` : ''}`;
}

export interface PostgresRolesAdapterOptions {
  /**
   * Roles no consumer's role may reach, directly or through a group (the policy's, predefined ones included; default
   * the predefined ones).
   */
  withheldRoles?: readonly string[] | undefined;
  /** Each consumer's role's CONNECTION LIMIT (the policy's; default {@link DEFAULT_CONNECTION_LIMIT}). */
  connectionLimit?: number | undefined;
  /** What the policy allows, for {@link PostgresRolesAdapter.publicRights} (default: no database, no schema). */
  allowedDatabases?: readonly string[] | undefined;
  schemasAllowed?: boolean | undefined;
}

export class PostgresRolesAdapter implements Adapter<PostgresRolesValues> {
  /** Several roles in one transaction, each in a savepoint (`createMany`). */
  readonly batch: BatchForm = { form: 'transaction', limit: POSTGRES_BATCH_LIMIT };
  /** The admin sessions on the primary: the one host, or the one of `admin.urls` not in recovery. */
  private readonly sessions: PrimaryPool;
  private readonly withheld: string[];
  private readonly calls: BackendCalls;
  /** Whether the admin may read pg_authid (verifiers); asked once. */
  private verifiersReadable: Promise<boolean> | undefined;
  /** Digests of (role, password, verifier) known to match: a check compares text, not PBKDF2. */
  private readonly verified = new Remembered(VERIFIED_CACHE);
  /** The role the admin connection logs in as: never a consumer's, adopted or not. */
  private readonly adminRole: string;
  /** The comment on the roles this provider makes. */
  private readonly mark: string;
  private readonly connectionLimit: number;
  private readonly publicScope: Omit<PublicGrantsScope, 'adminDatabase'>;
  private readonly adminPassword: string | undefined;
  /** Each host's start time and system identifier (postgres-run.ts), read once asked. */
  private readonly runs: PostgresRuns;
  private readonly watch: IncarnationWatch;

  constructor(
    admin: AdminConnection,
    private readonly ownership: Ownership,
    options: PostgresRolesAdapterOptions = {},
  ) {
    this.withheld = [...(options.withheldRoles ?? withheldRolesOf(undefined))];
    this.adminRole = admin.username ?? 'postgres';
    this.mark = roleMark(ownership.provider);
    this.connectionLimit = options.connectionLimit ?? DEFAULT_CONNECTION_LIMIT;
    this.publicScope = {
      allowedDatabases: options.allowedDatabases ?? [],
      schemasAllowed: options.schemasAllowed ?? false,
    };
    this.adminPassword = admin.password;
    const max = admin.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS;
    this.calls = new BackendCalls({
      adapter: 'postgres-roles',
      where:
        admin.urls && admin.urls.length > 1
          ? admin.urls.map((url) => hostOf(url, 'postgres')).join(',')
          : hostOf(admin.url, 'postgres'),
      adminSecrets: admin.password === undefined ? [] : [admin.password],
      maxConcurrent: max,
      answered: (error) => {
        const state = sqlState(error);
        // a standby's read-only refusal is could not apply (the sessions have been told: the primary is looked for
        // before the next call)
        return (
          state !== undefined &&
          state !== READ_ONLY &&
          (SERVER_TIMEOUTS.includes(state) || !UNAVAILABLE_CLASSES.includes(state.slice(0, 2)))
        );
      },
      code: (error) => {
        const state = sqlState(error);
        // a role that still owns objects (or holds privileges on them) is not dropped until someone acts
        if (state === '2BP01') return 'BACKEND_REFUSED';
        // the server ended a statement or a lock wait at the call's deadline (SET LOCAL at BEGIN)
        return state !== undefined && SERVER_TIMEOUTS.includes(state) ? 'DEADLINE_EXCEEDED' : undefined;
      },
      describe: serverSaid,
    });
    this.sessions = new PrimaryPool((admin.urls ?? [admin.url]).map(postgresHost), {
      user: this.adminRole,
      password: admin.password,
      max,
      application_name: 'holdfast',
    });
    const pace = incarnationPace(admin);
    const hosts = (admin.urls ?? [admin.url]).map(postgresHost);
    this.runs = new PostgresRuns(hosts, { user: this.adminRole, password: admin.password, max: 1 }, pace.timeoutMs);
    this.watch = new IncarnationWatch({
      ...pace,
      nodes: () => this.runs.nodes(),
      read: (n, s) => this.runs.read(n, s),
    });
  }

  /** Each host's incarnation: its postmaster's start time and system identifier, read every second once asked. */
  incarnations(): ReadonlyMap<string, Incarnation> {
    return this.watch.incarnations();
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    return this.watch.onIncarnation(listener);
  }

  /** Where a login as a consumer goes: the primary. */
  private get target(): PostgresHost {
    return this.sessions.target;
  }

  /**
   * Creates the role, or changes it when it carries this provider's mark (or an older
   * holdfast's bare mark, or none and the provider adopts: it is then marked). A role of another
   * provider, one without a mark, and the admin's own are refused (`BACKEND_REFUSED`), unchanged.
   */
  async create(grant: Grant<PostgresRolesValues>, options: CallOptions): Promise<void> {
    const { signal } = options;
    const role = await this.prepareRole(grant);
    await this.calls.run(
      signal,
      `the apply of role "${grant.login}"`,
      [grant.password],
      () => this.sessions.transaction(options, (client) => this.applyRole(client, role, signal)),
      role.forms,
    );
    this.verified.add(this.verifiedKey(grant.login, grant.password, role.verifier));
  }

  /**
   * {@link create} for several roles in one transaction, each in its own savepoint: one refused
   * (a role not this provider's) or failing is rolled back alone, and the others are committed
   * together. A transaction that cannot commit fails them all.
   */
  async createMany(
    grants: ReadonlyArray<Grant<PostgresRolesValues>>,
    options: CallOptions,
  ): Promise<Array<Each<void>>> {
    const { signal } = options;
    const prepared = await Promise.all(grants.map((grant) => settledOf(this.prepareRole(grant))));
    const secrets = grants.map((g) => g.password);
    const forms = prepared.flatMap((p) => (p.ok ? p.value.forms : []));
    if (!prepared.some((p) => p.ok)) return prepared.map((p) => (p.ok ? { ok: true, value: undefined } : p));
    const outcomes = await settledOf(
      this.calls.run(
        signal,
        `the apply of ${grants.length} roles`,
        secrets,
        () => this.sessions.transaction(options, (client) => this.applyBatch(client, prepared, signal)),
        forms,
      ),
    );
    if (!outcomes.ok) return prepared.map((p) => (p.ok ? { ok: false, error: outcomes.error } : p));
    outcomes.value.forEach((o, i) => {
      const p = prepared[i]!;
      if (o.ok && p.ok)
        this.verified.add(this.verifiedKey(p.value.grant.login, p.value.grant.password, p.value.verifier));
    });
    return outcomes.value;
  }

  /**
   * The roles of a batch, each in its own savepoint, their grants and revokes on databases and schemas sent last, one
   * statement per object (object-grants.ts). Where one of those fails, the batch is rolled back and each role applied
   * again with its own grants in its savepoint, so a role is still written whole or not at all.
   */
  private async applyBatch(
    client: pg.PoolClient,
    prepared: ReadonlyArray<Each<PreparedRole>>,
    signal: AbortSignal,
  ): Promise<Array<Each<void>>> {
    await client.query('SAVEPOINT holdfast_batch');
    const allNew = await this.createAllNew(client, prepared, signal);
    if (allNew) return allNew;
    const deferred: ObjectGrant[] = [];
    const each = await this.applyEach(client, prepared, signal, deferred);
    try {
      if (deferred.length > 0) await lockObjectRows(client);
      for (const statement of groupedStatements(deferred)) await client.query(statement);
      await client.query('RELEASE SAVEPOINT holdfast_batch');
      return each;
    } catch (error) {
      if (signal.aborted) throw error;
      await client.query('ROLLBACK TO SAVEPOINT holdfast_batch');
      return this.applyEach(client, prepared, signal);
    }
  }

  /**
   * Where no role of the batch exists yet, every one written in one round trip and their groups checked in one more
   * (new-roles.ts); undefined, with nothing of it kept, where one exists, a statement fails or a role would be refused:
   * the batch then goes role by role, each in its savepoint, so that each gets its own outcome.
   */
  private async createAllNew(
    client: pg.PoolClient,
    prepared: ReadonlyArray<Each<PreparedRole>>,
    signal: AbortSignal,
  ): Promise<Array<Each<void>> | undefined> {
    const ready = prepared.flatMap((p) => (p.ok ? [p.value] : []));
    const logins = ready.map((r) => r.grant.login);
    if (ready.length === 0 || (await existingRoles(client, logins)).size > 0) return undefined;
    const form = {
      attributes: `${ROLE_ATTRIBUTES} ${connectionLimitClause(this.connectionLimit)}`,
      mark: this.mark,
    };
    try {
      const roles = ready.map(({ grant, names, verifier }) => ({ login: grant.login, verifier, values: names }));
      await client.query(newRolesText(client, roles, form));
      if ((await privilegedAmong(client, logins, this.withheld)).length === 0) {
        await client.query('RELEASE SAVEPOINT holdfast_batch');
        return prepared.map((p) => (p.ok ? { ok: true, value: undefined } : p));
      }
    } catch (error) {
      if (signal.aborted) throw error;
    }
    await client.query('ROLLBACK TO SAVEPOINT holdfast_batch');
    return undefined;
  }

  /**
   * Each prepared role applied in its own savepoint. With `deferred`, a role's changes on databases and schemas are
   * added there (once the role is written) instead of sent.
   */
  private async applyEach(
    client: pg.PoolClient,
    prepared: ReadonlyArray<Each<PreparedRole>>,
    signal: AbortSignal,
    deferred?: ObjectGrant[],
  ): Promise<Array<Each<void>>> {
    const each: Array<Each<void>> = [];
    for (const p of prepared) {
      if (!p.ok) {
        each.push(p);
        continue;
      }
      const { grant, forms } = p.value;
      const own: ObjectGrant[] | undefined = deferred && [];
      const outcome = await this.inSavepoint(
        client,
        () => this.applyRole(client, p.value, signal, own),
        `the apply of role "${grant.login}"`,
        [grant.password],
        forms,
      );
      if (outcome.ok && own) deferred?.push(...own);
      each.push(outcome);
    }
    return each;
  }

  /** What one role's apply sends, computed before anything is: its names checked, its verifier made. */
  private async prepareRole(grant: Grant<PostgresRolesValues>): Promise<PreparedRole> {
    const names = this.names(grant.login, grant.values);
    if (grant.login === this.adminRole) {
      throw new HoldfastError(
        'BACKEND_REFUSED',
        `postgres-roles: the login "${grant.login}" is the admin role provider "${this.ownership.provider}" connects as; nothing was sent`,
      );
    }
    const keys = await scramKeys('sha256', prepared(grant.password), newSalt(), ITERATIONS);
    const verifier = postgresVerifier(keys);
    return { grant, names, verifier, forms: [verifier, ...keyForms(keys)] };
  }

  /** One role applied on `client`, in its transaction: refused when it exists and is not this provider's to change. */
  private async applyRole(
    client: pg.PoolClient,
    { grant, names, verifier }: PreparedRole,
    signal: AbortSignal,
    deferred?: ObjectGrant[],
  ): Promise<void> {
    const role = client.escapeIdentifier(grant.login);
    const owner = await this.ownerOf(client, grant.login);
    if (owner && !this.mayChange(owner)) throw this.refusal(grant.login, owner);
    const password = `PASSWORD ${client.escapeLiteral(verifier)} VALID UNTIL 'infinity'`;
    const limit = connectionLimitClause(this.connectionLimit);
    await client.query(`${owner ? 'ALTER' : 'CREATE'} ROLE ${role} WITH ${ROLE_ATTRIBUTES} ${limit} ${password}`);
    // the settings a login gave itself (ALTER ROLE … SET): a new role has none
    if (owner) await resetRoleSettings(client, grant.login);
    if (owner?.kind !== 'ours') await client.query(`COMMENT ON ROLE ${role} IS ${client.escapeLiteral(this.mark)}`);
    await this.grantExactly(client, grant.login, names, signal, { created: owner === undefined, deferred });
    await this.refusePrivilegedGroups(client, grant.login);
  }

  /**
   * `work` in a savepoint: rolled back alone when it fails (its error, scrubbed, is its outcome); a savepoint that
   * cannot be rolled back fails the transaction.
   */
  private async inSavepoint(
    client: pg.PoolClient,
    work: () => Promise<void>,
    what: string,
    secrets: readonly string[],
    forms: readonly string[],
  ): Promise<Each<void>> {
    await client.query('SAVEPOINT holdfast_role');
    try {
      await work();
      await client.query('RELEASE SAVEPOINT holdfast_role');
      return { ok: true, value: undefined };
    } catch (error) {
      await client.query('ROLLBACK TO SAVEPOINT holdfast_role');
      return { ok: false, error: this.calls.failure(error, what, secrets, forms) };
    }
  }

  /**
   * Drops the role when it is this provider's (or carries an older holdfast's bare mark); any other is left as it is.
   */
  async remove(login: string, options: CallOptions): Promise<void> {
    const { signal } = options;
    this.assertLogin(login);
    await this.calls.run(signal, `DROP ROLE "${login}"`, [], () =>
      this.sessions.transaction(options, async (client) => {
        const owner = await this.ownerOf(client, login);
        // absent, or never this provider's: nothing of its own to remove
        if (owner?.kind !== 'ours' && owner?.kind !== 'legacy') return;
        // the grants holdfast made would keep the role from being dropped: revoked first
        await this.grantExactly(client, login, { databases: [], schemas: [], roles: [] }, signal);
        await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(login)}`);
      }),
    );
  }

  async holds(grant: Grant<PostgresRolesValues>, options: CallOptions): Promise<HoldsAnswer> {
    const { signal } = options;
    this.names(grant.login, grant.values);
    const readable = await this.readable(options);
    const row = await this.calls.run(signal, `the reading of role "${grant.login}"`, [grant.password], () =>
      this.sessions.read(options, async (client) => {
        const query = withRoleSettings(roleQuery(readable));
        const result = await client.query<RoleRow & { settings: string[] }>(query, [grant.login, this.withheld]);
        return result.rows[0] ?? null;
      }),
    );
    return this.answerOf(grant, row, readable, signal);
  }

  /**
   * {@link holds} for several roles in one catalog read (a round's deep checks, and those that follow its heals), each
   * answer its own: a login refused before anything is sent, or a password compared by a login that fails, fails alone.
   */
  async holdsMany(
    grants: ReadonlyArray<Grant<PostgresRolesValues>>,
    options: CallOptions,
  ): Promise<Array<Each<HoldsAnswer>>> {
    const { signal } = options;
    const named = grants.map((g) => settledNow(() => this.names(g.login, g.values)));
    const logins = grants.filter((_, i) => named[i]!.ok).map((g) => g.login);
    const readable = logins.length > 0 && (await this.readable(options));
    const secrets = grants.map((g) => g.password);
    const rows = await this.calls.run(signal, `the reading of ${logins.length} roles`, secrets, async () =>
      logins.length === 0
        ? new Map<string, RoleRow & { settings: string[] }>()
        : this.sessions.read(options, async (client) => {
            const query = withRoleSettings(roleQuery(readable, true), true);
            const result = await client.query<RoleRow & { rolname: string; settings: string[] }>(query, [
              logins,
              this.withheld,
            ]);
            return new Map(result.rows.map((r) => [r.rolname, r]));
          }),
    );
    return Promise.all(
      grants.map(async (g, i): Promise<Each<HoldsAnswer>> => {
        const name = named[i]!;
        return name.ok ? settledOf(this.answerOf(g, rows.get(g.login) ?? null, readable, signal)) : name;
      }),
    );
  }

  /** What `row` (the role as read, null when absent) says of `grant`: its password compared, then the rest. */
  private async answerOf(
    grant: Grant<PostgresRolesValues>,
    row: (RoleRow & { settings: string[] }) | null,
    readable: boolean,
    signal: AbortSignal,
  ): Promise<HoldsAnswer> {
    const provider = this.ownership.provider;
    if (row === null || ownershipDiffers(row, provider) || !row.rolcanlogin || row.expired)
      return compareRole(row, grant.values, { matches: true }, provider);
    const password = readable
      ? await this.comparePassword(grant, row.rolpassword)
      : await this.loginAnswer(grant, signal);
    const answer = compareRole(row, grant.values, password, provider);
    if (!answer.held) return answer;
    return connectionLimitDiffers(row.rolconnlimit, this.connectionLimit) ?? roleSettingsDiffer(row.settings) ?? answer;
  }

  /**
   * Read-only, for `holdfast doctor`: where PUBLIC holds CONNECT or TEMPORARY on a database the policy does not allow,
   * or CREATE on a schema of an allowed database (and of the admin's, where consumers' schemas are), one sentence
   * each with what to revoke (public-grants.ts).
   */
  async publicRights(options: CallOptions): Promise<string[]> {
    const scope: PublicGrantsScope = { ...this.publicScope, adminDatabase: this.target.database };
    return this.calls.run(options.signal, "the reading of PUBLIC's rights", [], async () => {
      const found = await this.sessions.read(options, (client) => publicDatabaseGrants(client, scope));
      for (const database of schemaDatabases(scope)) {
        if (database === scope.adminDatabase)
          found.push(...(await this.sessions.read(options, (client) => publicSchemaGrants(client, database))));
        else found.push(...(await this.schemaGrantsIn(database, options.signal)));
      }
      return found;
    });
  }

  /**
   * {@link publicSchemaGrants} of another database than the admin's, on a short-lived admin connection to it, ended
   * when `signal` aborts.
   */
  private async schemaGrantsIn(database: string, signal: AbortSignal): Promise<string[]> {
    const client = new pg.Client({
      ...this.target,
      database,
      user: this.adminRole,
      password: this.adminPassword,
      connectionTimeoutMillis: 5_000,
      application_name: 'holdfast-doctor',
    });
    client.on('error', () => undefined);
    const end = () => void client.end().catch(() => undefined);
    signal.addEventListener('abort', end, { once: true });
    try {
      await client.connect();
      return await publicSchemaGrants(client, database);
    } catch (error) {
      if (signal.aborted) throw error;
      return [`the schemas of allowed database "${database}" could not be read: ${serverSaid(error)}`];
    } finally {
      signal.removeEventListener('abort', end);
      end();
    }
  }

  /**
   * Where the admin may read pg_authid: one indexed catalog read on a pooled connection, its
   * verifier compared with what this process computed or matched before (PBKDF2 only for a
   * verifier it has not seen). Otherwise a login as the role. Measured (test/bench/check-cost.ts,
   * 1,000 roles): 0.4 ms of the server's CPU, against 5 ms for a login (a backend process
   * forked and authenticated) and 0.85 ms for the deep check.
   */
  async authenticates(grant: Grant<PostgresRolesValues>, options: CallOptions): Promise<boolean> {
    const { signal } = options;
    this.names(grant.login, grant.values);
    if (!(await this.readable(options))) return (await this.loginAnswer(grant, signal)).matches;
    const row = await this.calls.run(signal, `the reading of role "${grant.login}"`, [grant.password], () =>
      this.sessions.read(options, async (client) => {
        const result = await client.query<{ ok: boolean; rolpassword: string | null }>(
          "SELECT rolcanlogin AND coalesce(rolvaliduntil > now(), true) AND shobj_description(oid, 'pg_authid') IS NOT DISTINCT FROM $2 AS ok, rolpassword FROM pg_catalog.pg_authid WHERE rolname = $1",
          [grant.login, this.mark],
        );
        return result.rows[0];
      }),
    );
    return row !== undefined && row.ok && (await this.comparePassword(grant, row.rolpassword)).matches;
  }

  async ping(options: CallOptions): Promise<void> {
    await this.calls.run(options.signal, 'SELECT 1', [], () =>
      this.sessions.read(options, (client) => client.query('SELECT 1')),
    );
  }

  async list(prefix: string, options: CallOptions): Promise<string[]> {
    return this.calls.run(options.signal, 'the listing of roles', [], () =>
      this.sessions.read(options, async (client) => {
        const result = await client.query<{ rolname: string }>(
          "SELECT rolname FROM pg_catalog.pg_roles WHERE starts_with(rolname, $1) AND shobj_description(oid, 'pg_authid') = $2 ORDER BY 1",
          [prefix, this.mark],
        );
        return result.rows.map((r) => r.rolname);
      }),
    );
  }

  /**
   * The sessions of `logins` on the primary now (`pg_stat_activity`: `usename`, `client_addr`, `backend_start`). The
   * admin sees another role's `client_addr` and `backend_start` only as a superuser or a member of
   * `pg_read_all_stats`; a session it cannot see so is left out. A Unix-socket session's address is `local`.
   */
  async openConnections(logins: ReadonlySet<string>, options: CallOptions): Promise<LoginSession[]> {
    if (logins.size === 0) return [];
    const rows = await this.calls.run(options.signal, 'the reading of pg_stat_activity', [], () =>
      this.sessions.read(options, async (client) => {
        const result = await client.query<{ usename: string; addr: string | null; started: Date | null }>(
          "SELECT usename, host(client_addr) || coalesce(':' || client_port, '') AS addr, backend_start AS started FROM pg_catalog.pg_stat_activity WHERE backend_type = 'client backend' AND usename = ANY($1::text[]) AND pid <> pg_backend_pid()",
          [[...logins]],
        );
        return result.rows;
      }),
    );
    return rows.flatMap((row) =>
      row.started === null
        ? []
        : [{ login: row.usename, address: row.addr ?? 'local', startedAt: row.started.getTime() }],
    );
  }

  async close(): Promise<void> {
    this.watch.close();
    await Promise.all([this.sessions.end(), this.runs.close()]);
  }

  /** Compares the verifier the server keeps with the grant's password. */
  private async comparePassword(grant: Grant<PostgresRolesValues>, stored: string | null): Promise<PasswordAnswer> {
    if (stored === null) return { matches: false, detail: 'the role has no password' };
    const key = this.verifiedKey(grant.login, grant.password, stored);
    if (this.verified.has(key)) return { matches: true };
    const theirs = parsePostgresVerifier(stored);
    if (theirs === null)
      return { matches: false, detail: "the role's password is not a SCRAM-SHA-256 verifier (md5 or plain)" };
    const ours: ScramKeys = await scramKeys('sha256', prepared(grant.password), theirs.salt, theirs.iterations);
    if (!sameKeys(ours, theirs))
      return { matches: false, detail: "the role's SCRAM verifier is not the grant's password" };
    this.verified.add(key);
    return { matches: true };
  }

  /**
   * Logs in as the role on a short-lived connection: authenticated (even without CONNECT on the database) or refused.
   */
  private async loginAnswer(grant: Grant<PostgresRolesValues>, signal: AbortSignal): Promise<PasswordAnswer> {
    const client = new pg.Client({
      ...this.target,
      user: grant.login,
      password: grant.password,
      connectionTimeoutMillis: 5_000,
      application_name: 'holdfast-check',
    });
    client.on('error', () => undefined);
    const refused = (detail: string): PasswordAnswer => ({ matches: false, detail });
    try {
      return await this.calls.run(signal, `a login as "${grant.login}"`, [grant.password], () =>
        client.connect().then(
          (): PasswordAnswer => ({ matches: true }),
          (error: unknown) => {
            const state = sqlState(error);
            if (state === '28P01') return refused("the server refuses the grant's password");
            if (state === '28000') return refused('the server refuses the login (pg_hba.conf or NOLOGIN)');
            // too many connections for the role: its CONNECTION LIMIT is checked after the password was accepted
            if (state === '53300') return { matches: true };
            // authenticated, then refused the database: the password is right
            if (state === '42501' || state === '3D000') return { matches: true };
            if (!signal.aborted) this.sessions.failed(error); // the primary gone, or no longer one: asked again before the next call
            throw error;
          },
        ),
      );
    } finally {
      void client.end().catch(() => undefined);
    }
  }

  /**
   * Grants exactly these databases, schemas and group roles to the role; revokes any other it holds. `created`: the
   * role was created in this transaction, and holds nothing yet (its grants are not read). `deferred`: its changes on
   * databases and schemas are added there, not sent (the batch sends them last).
   */
  private async grantExactly(
    client: pg.PoolClient,
    login: string,
    values: Pick<PostgresRolesValues, 'databases' | 'schemas' | 'roles'>,
    signal: AbortSignal,
    how: { created?: boolean; deferred?: ObjectGrant[] | undefined } = {},
  ): Promise<void> {
    const role = client.escapeIdentifier(login);
    const have = how.created ? NOTHING_HELD : await this.grantsOf(client, login);
    const id = (name: string) => client.escapeIdentifier(name);
    const memberships = [
      ...have.member_of.filter((g) => !values.roles.includes(g)).map((g) => `REVOKE ${id(g)} FROM ${role}`),
      ...values.roles.filter((g) => !have.member_of.includes(g)).map((g) => `GRANT ${id(g)} TO ${role}`),
    ];
    const change = (verb: ObjectGrant['verb'], object: string): ObjectGrant => ({ verb, object, role });
    const onObjects = [
      ...have.databases
        .filter((d) => !values.databases.includes(d))
        .map((d) => change('REVOKE', `CONNECT ON DATABASE ${id(d)}`)),
      ...values.databases
        .filter((d) => !have.databases.includes(d))
        .map((d) => change('GRANT', `CONNECT ON DATABASE ${id(d)}`)),
      ...have.schemas
        .filter((s) => !values.schemas.includes(s))
        .map((s) => change('REVOKE', `USAGE ON SCHEMA ${id(s)}`)),
      ...values.schemas
        .filter((s) => !have.schemas.includes(s))
        .map((s) => change('GRANT', `USAGE ON SCHEMA ${id(s)}`)),
    ];
    if (how.deferred) how.deferred.push(...onObjects.splice(0));
    // a grant on a database or schema rewrites its catalog row: one at a time, or PostgreSQL fails the others
    if (onObjects.length > 0) await lockObjectRows(client);
    for (const statement of [...memberships, ...onObjects.map(objectStatement)]) {
      if (signal.aborted)
        throw new HoldfastError(
          'DEADLINE_EXCEEDED',
          `postgres-roles: the grants of role "${login}" passed their deadline; the transaction is rolled back`,
        );
      await client.query(statement);
    }
  }

  /** The role's memberships and its privileges on databases and schemas, as the catalogs have them. */
  private async grantsOf(client: pg.PoolClient, login: string): Promise<Granted> {
    const { rows } = await client.query<Granted>(
      `SELECT member_of, databases, schemas FROM (${roleQuery(false)}) AS role_state`,
      [login, this.withheld],
    );
    return rows[0] ?? NOTHING_HELD;
  }

  private readable(options: CallOptions): Promise<boolean> {
    this.verifiersReadable ??= this.calls
      .run(options.signal, 'the question whether pg_authid is readable', [], () =>
        this.sessions.read(options, async (client) => {
          const result = await client.query<{ readable: boolean }>(
            "SELECT has_table_privilege('pg_catalog.pg_authid', 'SELECT') AS readable",
          );
          return result.rows[0]?.readable === true;
        }),
      )
      .catch((error: unknown) => {
        this.verifiersReadable = undefined; // asked again next time
        throw error;
      });
    return this.verifiersReadable;
  }

  private verifiedKey(login: string, password: string, verifier: string): string {
    return sha256Hex(`${login}\u0000${password}\u0000${verifier}`);
  }

  /** Refuses, before anything is sent, a login or a name PostgreSQL would truncate or that holdfast does not use. */
  private names(login: string, values: PostgresRolesValues): PostgresRolesValues {
    this.assertLogin(login);
    for (const name of [...values.databases, ...values.schemas, ...values.roles]) {
      const problem = identifierProblem(name);
      if (problem)
        throw new HoldfastError('BACKEND_REFUSED', `postgres-roles: the name "${name}" ${problem}; nothing was sent`);
    }
    return values;
  }

  private assertLogin(login: string): void {
    const problem = loginProblem(login);
    if (problem)
      throw new HoldfastError('BACKEND_REFUSED', `postgres-roles: the login "${login}" ${problem}; nothing was sent`);
  }

  /** Whose the role is, by its comment; undefined when there is no such role. */
  private async ownerOf(client: pg.PoolClient, login: string): Promise<RoleOwner | undefined> {
    const { rows } = await client.query<{ comment: string | null }>(
      "SELECT shobj_description(oid, 'pg_authid') AS comment FROM pg_catalog.pg_roles WHERE rolname = $1",
      [login],
    );
    return rows[0] && roleOwner(rows[0].comment, this.ownership.provider);
  }

  /** This provider's, an older holdfast's (claimed now), or unmarked and adopted. */
  private mayChange(owner: RoleOwner): boolean {
    return owner.kind === 'ours' || owner.kind === 'legacy' || (owner.kind === 'none' && this.ownership.adopt);
  }

  private refusal(login: string, owner: RoleOwner): HoldfastError {
    const provider = this.ownership.provider;
    const fix =
      owner.kind === 'provider'
        ? `give this consumer another login, or remove it from provider "${owner.provider}" first`
        : `drop or rename that role, give this consumer another login, or set adopt: true on provider "${provider}" to take it over`;
    return new HoldfastError(
      'BACKEND_REFUSED',
      `postgres-roles: role "${login}" exists but ${notOwnedWords(owner, provider) ?? ''}; it is not changed (${fix})`,
    );
  }

  /**
   * Refuses (the transaction rolled back) a role that could SET ROLE to one with a right a consumer's role never has.
   */
  private async refusePrivilegedGroups(client: pg.PoolClient, login: string): Promise<void> {
    const { rows } = await client.query<{ groups: string[] }>(
      `SELECT ${PRIVILEGED_GROUPS} AS groups FROM pg_catalog.pg_roles r WHERE r.rolname = $1`,
      [login, this.withheld],
    );
    const groups = rows[0]?.groups ?? [];
    if (groups.length === 0) return;
    throw new HoldfastError(
      'BACKEND_REFUSED',
      `postgres-roles: role "${login}" would be a member of ${groups.join(', ')}, and could SET ROLE to it (or use its rights); a consumer's role has no such right, so nothing was changed (take those attributes or withheld roles from the group, or the group from the provider's allowedRoles)`,
    );
  }
}

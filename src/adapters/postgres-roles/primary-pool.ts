/**
 * Where a `postgres-roles` provider's admin calls go. On one host (`admin.url`) it is the
 * {@link AdminSessions} of that host, nothing more. On several (`admin.urls`: a primary and its
 * standbys) it is the AdminSessions of the one host that is not in recovery
 * (`SELECT pg_is_in_recovery()`), and it follows a promotion:
 *
 * - every listed host is asked at the first call, and again (beside the calls) when the last
 *   asking is older than {@link ASK_AGAIN_MS};
 * - a call that cannot connect, loses its connection, meets a server shutting down, or is
 *   refused as read-only (SQLSTATE 25006) makes every host be asked at once; when another host
 *   is the primary now, a read, or a transaction that failed before its work began, runs once
 *   more there. A transaction that failed so after its work began fails (could not apply: its
 *   statements went to a host that is not the primary, or lost it), and the next call waits for
 *   an asking. A call ended at its deadline (its session terminated) says nothing of the primary.
 * - moving to another host ends the old host's AdminSessions: its idle connections close at
 *   once, those of calls still running as the calls finish, and a call that passes its deadline
 *   there still has its session terminated on that host (each AdminSessions ends sessions only
 *   on its own host).
 *
 * Nothing is written to a standby: roles reach it by PostgreSQL's own replication. When no host,
 * or more than one, is out of recovery, a call fails (could not ask) naming each host's answer:
 * writing to one of two primaries would lose what the other's history keeps.
 */
import pg from 'pg';
import type { CallOptions } from '../adapter.js';
import { isHoldfastError } from '../../errors/holdfast-error.js';
import { AdminSessions } from './admin-sessions.js';

export interface PostgresHost {
  host: string;
  port: number;
  database: string;
}

/** Asked of every host at least this often while calls are made (beside them, not before them). */
export const ASK_AGAIN_MS = 10_000;
/** How long one host may take to connect and answer whether it is in recovery. */
const ASK_TIMEOUT_MS = 5_000;

/** The admin sessions' settings other than where they connect (user, password, pool size, application name). */
export type SessionSettings = Omit<pg.ClientConfig, 'host' | 'port' | 'database' | 'connectionString'> & {
  max: number;
};

/** A PostgreSQL URL's host, port and database (defaults 127.0.0.1, 5432, postgres). */
export function postgresHost(url: string): PostgresHost {
  const parsed = new URL(url);
  return {
    host: decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: Number(parsed.port || 5432),
    database: decodeURIComponent(parsed.pathname.slice(1)) || 'postgres',
  };
}

/** `host:port`, for messages. */
export function hostLabel({ host, port }: PostgresHost): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** No listed host is the one primary: none is out of recovery, or several are. */
export class NoPrimaryError extends Error {
  override readonly name = 'NoPrimaryError';
}

/**
 * Whether a call's failure may mean its host is no longer the primary (or gone): an error with
 * no SQLSTATE (refused, reset, timed out, terminated), a connection exception (class 08), a
 * server shutting down or starting (57P01-57P03), or a read-only refusal (25006). Not holdfast's
 * own refusals (a HoldfastError thrown by a call's work).
 */
export function lostPrimary(error: unknown): boolean {
  if (isHoldfastError(error)) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code === '25006' || code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code);
}

type Answer =
  { kind: 'answered'; host: PostgresHost; standby: boolean } | { kind: 'failed'; host: PostgresHost; failed: string };

export class PrimaryPool {
  private sessions: AdminSessions;
  private primary: PostgresHost;
  /** When every host was last asked (0: never). */
  private askedAt = 0;
  /** Whether an asking found the one primary yet: until then each call waits for one. */
  private found = false;
  /** A call failed as if the primary were gone or read-only: the next call waits for an asking. */
  private doubted = false;
  private asking: Promise<void> | undefined;
  private ended = false;

  constructor(
    private readonly hosts: readonly PostgresHost[],
    private readonly settings: SessionSettings,
    /** How often every host is asked beside the calls (a test may ask never: `Infinity`). */
    private readonly askAgainMs = ASK_AGAIN_MS,
  ) {
    if (hosts.length === 0) throw new Error('a PrimaryPool needs at least one host');
    this.primary = hosts[0]!;
    this.sessions = this.open(this.primary);
  }

  /** Where calls go: the primary last found (before any was asked, the first host listed). */
  get target(): PostgresHost {
    return this.primary;
  }

  /** {@link AdminSessions.read} on the primary; run once more there when it moved. */
  read<T>(options: CallOptions, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.onPrimary(
      options,
      (sessions) => sessions.read(options, work),
      () => true,
    );
  }

  /** {@link AdminSessions.transaction} on the primary; run once more there when it moved before `work` began. */
  transaction<T>(options: CallOptions, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let begun = false;
    const started = (client: pg.PoolClient) => {
      begun = true;
      return work(client);
    };
    return this.onPrimary(
      options,
      (sessions) => sessions.transaction(options, started),
      () => !begun,
    );
  }

  /**
   * Told of a failure beside its calls (a login as a consumer on the primary that could not
   * connect): if it may mean the primary moved, every host is asked before the next call.
   */
  failed(error: unknown): void {
    if (this.hosts.length > 1 && lostPrimary(error)) this.doubted = true;
  }

  async end(): Promise<void> {
    this.ended = true;
    await this.sessions.end();
  }

  /**
   * Runs `call` on the primary's sessions. When it fails as if the primary were gone or
   * read-only (and not at its deadline), every host is asked; when another is the primary now
   * and `mayRunAgain`, `call` runs once more, there.
   */
  private async onPrimary<T>(
    options: CallOptions,
    call: (sessions: AdminSessions) => Promise<T>,
    mayRunAgain: () => boolean,
  ): Promise<T> {
    if (this.hosts.length === 1) return call(this.sessions);
    if (!this.found || this.doubted) await this.askAll();
    else if (Date.now() - this.askedAt > this.askAgainMs) void this.askAll().catch(() => undefined); // the calls themselves fail if it is gone
    const before = this.sessions;
    try {
      return await call(before);
    } catch (error) {
      // a call ended at its deadline (its session terminated by holdfast) says nothing of the primary
      if (options.signal.aborted || !lostPrimary(error)) throw error;
      if (!mayRunAgain()) {
        this.doubted = true; // its statements went to a host that may not be the primary: not run again, the next call asks first
        throw error;
      }
      await this.askAll(true);
      if (this.sessions === before) throw error;
      return call(this.sessions);
    }
  }

  /** Asks every host (one asking at a time: callers meanwhile share it) and moves the sessions to the one primary. */
  private askAll(afresh = false): Promise<void> {
    // an asking under way when a call failed may have begun before the failure: it is waited for, then one more
    if (this.asking && afresh) return this.asking.catch(() => undefined).then(() => this.askAll());
    this.asking ??= this.survey().finally(() => (this.asking = undefined));
    return this.asking;
  }

  private async survey(): Promise<void> {
    this.doubted = false;
    const answers = await Promise.all(this.hosts.map((host) => this.ask(host)));
    this.askedAt = Date.now();
    const primaries = answers.filter((a) => a.kind === 'answered' && !a.standby).map((a) => a.host);
    if (primaries.length !== 1) {
      this.doubted = true; // found beside the calls too: each call waits for the next asking, and fails while none or several are
      throw new NoPrimaryError(noPrimary(answers, primaries));
    }
    const [next] = primaries as [PostgresHost];
    this.found = true;
    if (next === this.primary || this.ended) return;
    const old = this.sessions;
    this.primary = next;
    this.sessions = this.open(next);
    void old.end(); // its idle connections close now, the others as their calls finish (a late one's session is ended on its own host)
  }

  /** Whether `host` is in recovery, on a connection of its own; what went wrong otherwise. */
  private async ask(host: PostgresHost): Promise<Answer> {
    const { max: _max, ...settings } = this.settings;
    const client = new pg.Client({
      ...settings,
      ...host,
      connectionTimeoutMillis: ASK_TIMEOUT_MS,
      query_timeout: ASK_TIMEOUT_MS,
      application_name: 'holdfast-probe',
    });
    client.on('error', () => undefined); // a connection lost while asking: the query fails
    try {
      await client.connect();
      const { rows } = await client.query<{ standby: boolean }>('SELECT pg_catalog.pg_is_in_recovery() AS standby');
      return { kind: 'answered', host, standby: rows[0]?.standby === true };
    } catch (error) {
      return { kind: 'failed', host, failed: error instanceof Error ? error.message : String(error) };
    } finally {
      void client.end().catch(() => undefined);
    }
  }

  private open(host: PostgresHost): AdminSessions {
    return new AdminSessions({ ...this.settings, ...host });
  }
}

/** Why no host is the primary, naming each host's answer. */
function noPrimary(answers: readonly Answer[], primaries: readonly PostgresHost[]): string {
  const said = answers
    .map(
      (a) =>
        `${hostLabel(a.host)} ${a.kind === 'failed' ? `could not be asked (${a.failed})` : a.standby ? 'is in recovery' : 'is a primary'}`,
    )
    .join('; ');
  return primaries.length === 0
    ? `no listed host is a primary (not in recovery): ${said}`
    : `${primaries.length} listed hosts are primaries (not in recovery), and holdfast writes to none of them until one is a standby again: ${said}`;
}

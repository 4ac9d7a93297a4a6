/**
 * The `postgres-roles` adapter's admin connections: a pool of at most `max`, each call on one
 * connection of its own, bounded on the server as well as in holdfast.
 *
 * - While a call holds a connection, an `error` listener is on it (pg-pool listens only to idle
 *   ones): a connection cut mid-call (pg_terminate_backend, a restart, a TCP reset) fails that
 *   call, never the process.
 * - A transaction carries `SET LOCAL statement_timeout` and `lock_timeout` set to what is left of
 *   the call's deadline, so the server ends a slow statement or a lock wait by itself.
 * - When the call's signal aborts, its session is terminated on the server (from a short-lived
 *   connection of its own: the pool's may all be busy), which ends whatever it still runs and
 *   releases its locks; the connection is then destroyed, never handed to the next call.
 */
import pg from 'pg';
import type { CallOptions } from '../adapter.js';

/** A statement or lock wait is given at least this long on the server, even with the deadline nearly there. */
const MIN_SERVER_MS = 100;

/** The backend process of a connected client (pg keeps it from the server's BackendKeyData, untyped). */
function backendPid(client: pg.PoolClient): number | undefined {
  const pid = (client as unknown as { processID?: unknown }).processID;
  return typeof pid === 'number' && pid > 0 ? pid : undefined;
}

/** Thrown into a call whose signal aborted; BackendCalls has already returned DEADLINE_EXCEEDED. */
class PastDeadline extends Error {
  constructor() {
    super('the call passed its deadline; its session was ended on the server');
    this.name = 'PastDeadline';
  }
}

export class AdminSessions {
  private readonly pool: pg.Pool;

  constructor(private readonly config: pg.ClientConfig & { max: number }) {
    this.pool = new pg.Pool({
      ...config,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    this.pool.on('error', () => undefined); // an idle connection lost: the next call opens another
  }

  /** Runs `work` on one connection; `signal` aborting ends its session on the server. */
  read<T>(options: CallOptions, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.use(options, false, work);
  }

  /** Runs `work` in one transaction, its statements and lock waits bounded by the call's deadline on the server too. */
  transaction<T>(options: CallOptions, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.use(options, true, work);
  }

  async end(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  private async use<T>(
    options: CallOptions,
    transaction: boolean,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    const { signal } = options;
    const client = await this.pool.connect();
    if (signal.aborted) {
      client.release(); // the deadline passed while a connection was opened: nothing was sent on it, it goes back as it is
      throw new PastDeadline();
    }
    /** Why this connection may not go back to the pool: it failed, or its call passed its deadline. */
    let broken: Error | undefined;
    const onError = (error: Error) => (broken ??= error);
    client.on('error', onError);
    const onAbort = () => {
      broken ??= new PastDeadline();
      const pid = backendPid(client);
      if (pid !== undefined) void this.terminate(pid);
    };
    try {
      signal.addEventListener('abort', onAbort, { once: true });
      if (transaction) await client.query(`BEGIN; ${timeouts(options.deadline)}`);
      const result = await work(client);
      if (transaction) await client.query('COMMIT');
      return result;
    } catch (error) {
      if (transaction && broken === undefined) {
        await client
          .query('ROLLBACK')
          .catch((e: unknown) => (broken ??= e instanceof Error ? e : new Error(String(e))));
      }
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) broken ??= new PastDeadline();
      // a broken or late connection is destroyed (its listener stays: it may still report its end)
      client.release(broken);
      if (broken === undefined) client.removeListener('error', onError); // back in the pool, whose idle listener covers it
    }
  }

  /**
   * Ends the session `pid` on the server, from a connection of its own. Only a holdfast admin
   * session of the same role is ended (a pid reused meanwhile by another session is left alone).
   */
  private async terminate(pid: number): Promise<void> {
    const { max: _max, ...config } = this.config;
    const client = new pg.Client({ ...config, connectionTimeoutMillis: 5_000, application_name: 'holdfast-cancel' });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE pid = $1 AND usename = current_user AND application_name = $2',
        [pid, this.config.application_name ?? ''],
      );
    } catch {
      // the server is gone or full: the statement_timeout set at BEGIN still ends a transaction's statement
    } finally {
      void client.end().catch(() => undefined);
    }
  }
}

/**
 * `SET LOCAL` statements that bound each statement and lock wait to what is left before `deadline` (none without one).
 */
function timeouts(deadline: number | undefined): string {
  if (deadline === undefined) return '';
  const ms = Math.max(MIN_SERVER_MS, Math.ceil(deadline - Date.now()));
  return `SET LOCAL statement_timeout = ${ms}; SET LOCAL lock_timeout = ${ms}`;
}

/**
 * A PostgreSQL host's incarnation: `pg_postmaster_start_time()` (a new one each start of the
 * server) and the system identifier `pg_control_system()` gives (a new one when the data directory
 * is made again by initdb; a standby made by `pg_basebackup` keeps its primary's), and whether it
 * is in recovery (a standby promoted is a primary now). Each host of `admin.urls` is read on one
 * connection of its own (`application_name` `holdfast-incarnation`), opened again when it breaks;
 * the server ends the statement at the read's deadline (`statement_timeout`), and the client
 * closes the connection when its signal aborts. Its errors keep no server's words.
 */
import pg from 'pg';
import { HoldfastError } from '../../errors/holdfast-error.js';
import type { NodeRun } from '../incarnation.js';
import { hostLabel, type PostgresHost, type SessionSettings } from './primary-pool.js';

const QUERY = `SELECT pg_catalog.pg_postmaster_start_time()::text AS started, pg_catalog.pg_is_in_recovery() AS standby`;
const SYSTEM_QUERY = 'SELECT system_identifier::text AS id FROM pg_catalog.pg_control_system()';

/** The run `rows` say: the start time as the server writes it (microseconds kept), the system identifier. */
export function postgresRunOf(started: string | undefined, standby: boolean | undefined, systemId?: string): NodeRun {
  return {
    ...(started !== undefined ? { runId: started } : {}),
    ...(systemId !== undefined ? { systemId } : {}),
    ...(standby === undefined ? {} : { role: standby ? ('replica' as const) : ('primary' as const) }),
  };
}

export class PostgresRuns {
  private readonly clients = new Map<string, Promise<pg.Client>>();
  private readonly hosts: ReadonlyMap<string, PostgresHost>;
  /** Whether `pg_control_system()` may be read (a role without `pg_monitor` may be refused it); asked once. */
  private systemReadable = true;
  private closed = false;

  constructor(
    hosts: readonly PostgresHost[],
    private readonly settings: SessionSettings,
    private readonly timeoutMs: number,
  ) {
    this.hosts = new Map(hosts.map((h) => [hostLabel(h), h]));
  }

  /** Every host, `host:port`. */
  nodes(): string[] {
    return [...this.hosts.keys()];
  }

  async read(node: string, signal: AbortSignal): Promise<NodeRun> {
    const client = await this.client(node);
    const onAbort = () => this.drop(node, client);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const { rows } = await client.query<{ started: string; standby: boolean }>(QUERY);
      const systemId = this.systemReadable ? await this.systemId(client) : undefined;
      return postgresRunOf(rows[0]?.started, rows[0]?.standby, systemId);
    } catch (error) {
      this.drop(node, client);
      const code = codeOf(error);
      throw new HoldfastError(
        code === '57014' ? 'DEADLINE_EXCEEDED' : 'BACKEND_UNAVAILABLE',
        `postgres-roles: the incarnation of ${node} could not be read (${code})`,
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(open.map((c) => c.then((client) => client.end()).catch(() => undefined)));
  }

  private async systemId(client: pg.Client): Promise<string | undefined> {
    try {
      return (await client.query<{ id: string }>(SYSTEM_QUERY)).rows[0]?.id;
    } catch (error) {
      if (codeOf(error) !== '42501') throw error; // insufficient_privilege: the start time alone, from now on
      this.systemReadable = false;
      return undefined;
    }
  }

  private client(node: string): Promise<pg.Client> {
    let client = this.clients.get(node);
    if (client === undefined) {
      client = this.connect(node);
      this.clients.set(node, client);
      client.catch(() => this.clients.delete(node));
    }
    return client;
  }

  private async connect(node: string): Promise<pg.Client> {
    const { max: _max, ...settings } = this.settings;
    const client = new pg.Client({
      ...settings,
      ...this.hosts.get(node),
      application_name: 'holdfast-incarnation',
      connectionTimeoutMillis: this.timeoutMs,
      statement_timeout: this.timeoutMs,
    });
    client.on('error', () => this.drop(node, client)); // a restart, a reset: the next read connects again
    client.on('end', () => this.drop(node, client));
    await client.connect();
    if (this.closed) {
      void client.end().catch(() => undefined);
      throw new HoldfastError('BACKEND_UNAVAILABLE', 'postgres-roles: the adapter is closed');
    }
    return client;
  }

  private drop(node: string, client: pg.Client): void {
    void this.clients.get(node)?.then(
      (current) => {
        if (current !== client) return;
        this.clients.delete(node);
        void client.end().catch(() => undefined);
      },
      () => undefined,
    );
  }
}

/** A SQLSTATE, or the driver error's code (ECONNREFUSED…): never the server's words. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'no-answer';
}

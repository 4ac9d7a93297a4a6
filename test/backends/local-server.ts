/**
 * Backends as local processes on loopback ports with throw-away data directories:
 * redis-server, FerretDB (SQLite handler), PostgreSQL and SeaweedFS, each started by the harness.
 */
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Recipe } from './local-recipe.js';
import { ManagedProcess } from './managed-process.js';
import { freePorts } from './ports.js';
import { waitUntilReady } from './probe.js';
import { instanceDir, type RunDir } from './run-dir.js';
import { baseBackup, followPrimary, promote, type StandbyOf } from './postgres-standby.js';
import { seaweedFsRecipe } from './seaweedfs.js';
import { serverEnvironment, type TestBackendSettings } from './settings.js';
import type { BackendEndpoint, BackendKind, BackendOptions, OwnedBackend, RestartOptions } from './types.js';

function secret(): string {
  return randomBytes(18).toString('base64url');
}

export function version(command: string, args: string[]): string {
  try {
    return (
      execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
        .trim()
        .split('\n')[0] ?? command
    );
  } catch (error) {
    throw new Error(`${command} is not usable here (run scripts/install-deps.sh): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The uid/gid PostgreSQL runs as: `postgres` when we are root, else ourselves. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Where FerretDB keeps its `<database>.sqlite` files inside an instance directory. */
function ferretDbDataDir(dir: string): string {
  return join(dir, 'data');
}

function recipe(kind: BackendKind, settings: TestBackendSettings, options: BackendOptions): Recipe {
  const { binaries } = settings;
  switch (kind) {
    case 'redis':
      return {
        flavor: version(binaries.redisServer, ['--version']).replace(/^Redis server v=(\S+).*/, 'redis-server $1'),
        username: 'default',
        url: (port, password) => `redis://default:${password}@127.0.0.1:${port}`,
        persist: async (url) => {
          const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
          try {
            await client.save();
          } finally {
            client.disconnect();
          }
        },
        prepare: (dir, _password, fresh) => {
          if (fresh) rmSync(join(dir, 'dump.rdb'), { force: true });
        },
        spec: (dir, port, password) => ({
          command: binaries.redisServer,
          args: [
            '--bind',
            '127.0.0.1',
            '--port',
            String(port),
            '--dir',
            dir,
            '--save',
            '',
            '--appendonly',
            'no',
            '--requirepass',
            password,
            '--daemonize',
            'no',
            '--protected-mode',
            'no',
            ...(options.redisArgs ?? []),
          ],
        }),
      };
    case 'mongodb':
      return {
        flavor: `ferretdb ${version(binaries.ferretdb, ['--version']).replace(/^version:\s*/, '')}`,
        username: 'admin',
        url: (port, password) => `mongodb://admin:${password}@127.0.0.1:${port}/?authSource=admin`,
        prepare: (dir, _password, fresh) => {
          if (fresh) rmSync(ferretDbDataDir(dir), { recursive: true, force: true });
          mkdirSync(ferretDbDataDir(dir), { recursive: true });
        },
        // busy_timeout is given explicitly: FerretDB adds its own default (also 10 s) only when
        // the URL sets none, and indexFerretDb's sqlite3 writes to these files while it runs.
        spec: (dir, port, password) => ({
          command: binaries.ferretdb,
          args: [
            '--handler=sqlite',
            `--sqlite-url=file:${ferretDbDataDir(dir)}/?_pragma=busy_timeout(10000)&_pragma=synchronous(off)`,
            `--state-dir=${dir}`,
            `--listen-addr=127.0.0.1:${port}`,
            '--debug-addr=-',
            '--telemetry=disable',
            '--test-enable-new-auth',
            '--setup-database=admin',
            '--setup-username=admin',
            `--setup-password=${password}`,
            '--log-level=warn',
          ],
        }),
      };
    case 'postgres': {
      const user = postgresUser();
      const bin = (name: string) => join(binaries.postgresBinDir, name);
      const primary = options.postgresStandbyOf;
      return {
        flavor: version(bin('postgres'), ['--version']),
        username: 'postgres',
        // a standby has its primary's roles, the admin's password with them
        ...(primary ? { newAdmin: () => ({ username: 'postgres', password: primary.password }) } : {}),
        url: (port, password) => `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
        prepare: (dir, password, fresh) => {
          const data = join(dir, 'pgdata');
          if (!fresh) return;
          rmSync(data, { recursive: true, force: true });
          if (user) chownSync(dir, user.uid, user.gid);
          if (primary) return baseBackup(bin, data, primary, user);
          const pwfile = join(dir, 'pwfile');
          writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
          if (user) chownSync(pwfile, user.uid, user.gid);
          execFileSync(
            bin('initdb'),
            [
              '-D',
              data,
              '-U',
              'postgres',
              '--auth=scram-sha-256',
              `--pwfile=${pwfile}`,
              '-E',
              'UTF8',
              '--locale=C',
              '--no-sync',
            ],
            { stdio: 'pipe', env: serverEnvironment(), ...(user ?? {}) },
          );
          rmSync(pwfile);
        },
        spec: (dir, port) => ({
          command: bin('postgres'),
          args: [
            '-D',
            join(dir, 'pgdata'),
            '-p',
            String(port),
            '-c',
            'listen_addresses=127.0.0.1',
            '-c',
            'unix_socket_directories=',
            '-c',
            'fsync=off',
            '-c',
            'synchronous_commit=off',
            '-c',
            'full_page_writes=off',
            '-c',
            'max_connections=200',
            ...Object.entries(options.postgresSettings ?? {}).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
          ],
          stopSignal: 'SIGINT',
          ...(user ? { user } : {}),
        }),
        promote: (dir) => promote(bin, dir, user),
        follow: (dir, primary) => followPrimary(dir, primary, user),
      };
    }
    case 's3':
      return seaweedFsRecipe(binaries.weed, version(binaries.weed, ['version']));
  }
}

/** How many times a server is started on new ports when it exited while starting. */
const START_ATTEMPTS = 3;

/** A server process that exited before it answered (a port taken meanwhile, most often). */
class ExitedWhileStarting extends Error {}

export class LocalServer implements OwnedBackend {
  readonly origin = 'local' as const;
  readonly host = '127.0.0.1';
  readonly admin: { username: string; password: string };
  readonly url: string;
  readonly flavor: string;
  /** FerretDB's SQLite data directory (mongodb only). */
  readonly sqliteDir: string | undefined;
  private process: ManagedProcess | undefined;

  private constructor(
    readonly kind: BackendKind,
    readonly port: number,
    private readonly extraPorts: readonly number[],
    private readonly run: RunDir,
    private readonly dir: string,
    private readonly recipe: Recipe,
  ) {
    this.admin = recipe.newAdmin?.() ?? { username: recipe.username, password: secret() };
    this.url = recipe.url(port, this.admin.password, this.admin.username);
    this.flavor = recipe.flavor;
    this.sqliteDir = kind === 'mongodb' ? ferretDbDataDir(dir) : undefined;
  }

  /**
   * Starts a server on free ports. A port found free can be taken before the server binds it
   * (another suite's server or outgoing connection gets it from the same ephemeral range; the
   * server then exits, or its probe reaches the other one): a start whose process exited
   * before it answered is tried again on other ports, up to {@link START_ATTEMPTS} times (a
   * server that cannot start at all fails each time, and its last log is said).
   */
  static async start(
    kind: BackendKind,
    run: RunDir,
    settings: TestBackendSettings,
    options: BackendOptions = {},
  ): Promise<LocalServer> {
    const how = recipe(kind, settings, options);
    for (let attempt = 1; ; attempt++) {
      const [port, ...extraPorts] = await freePorts(1 + (how.extraPorts ?? 0));
      const server = new LocalServer(kind, port!, extraPorts, run, instanceDir(run, kind), how);
      try {
        await server.launch(true);
        return server;
      } catch (error) {
        if (attempt >= START_ATTEMPTS || !(error instanceof ExitedWhileStarting)) throw error;
      }
    }
  }

  /** The server's own metrics, where its recipe exposes them. */
  get metricsUrl(): string | undefined {
    return this.recipe.metricsUrl?.(this.extraPorts);
  }

  /** The server's filer (HTTP), where its recipe exposes it. */
  get filerUrl(): string | undefined {
    return this.recipe.filerUrl?.(this.extraPorts);
  }

  /** Plain data for another process. */
  endpoint(): BackendEndpoint {
    const { kind, origin, flavor, host, port, admin, url, sqliteDir, metricsUrl, filerUrl } = this;
    return {
      kind,
      origin,
      flavor,
      host,
      port,
      admin,
      url,
      ...(sqliteDir === undefined ? {} : { sqliteDir }),
      ...(metricsUrl === undefined ? {} : { metricsUrl }),
      ...(filerUrl === undefined ? {} : { filerUrl }),
    };
  }

  private async launch(fresh: boolean): Promise<void> {
    this.recipe.prepare(this.dir, this.admin.password, fresh);
    const proc = new ManagedProcess(this.run, {
      ...this.recipe.spec(this.dir, this.port, this.admin.password, {
        username: this.admin.username,
        ports: this.extraPorts,
      }),
      cwd: this.dir,
      logFile: join(this.dir, 'server.log'),
    });
    this.process = proc;
    proc.start();
    try {
      await waitUntilReady(this.endpoint(), {
        ...(this.recipe.readyTimeoutMs === undefined ? {} : { timeoutMs: this.recipe.readyTimeoutMs }),
        stillStarting: () => proc.running,
        describeFailure: () => proc.logTail(),
      });
    } catch (error) {
      const exited = !proc.running;
      await proc.stop();
      throw exited ? new ExitedWhileStarting(error instanceof Error ? error.message : String(error)) : error;
    }
  }

  async restart(options: RestartOptions = {}): Promise<void> {
    if (options.keepData !== false && this.recipe.persist && this.process?.running) await this.recipe.persist(this.url);
    await this.down();
    await this.up(options);
  }

  async down(): Promise<void> {
    await this.process?.stop();
  }

  async up(options: RestartOptions = {}): Promise<void> {
    await this.launch(options.keepData === false);
  }

  /** Ends a PostgreSQL standby's recovery (`pg_ctl promote`): it takes writes from now on. */
  promote(): Promise<void> {
    if (!this.recipe.promote) throw new Error(`a ${this.kind} server cannot be promoted`);
    this.recipe.promote(this.dir);
    return Promise.resolve();
  }

  /** Stops a PostgreSQL server (cleanly) and starts it again, its data kept, as a streaming standby of `primary`. */
  async followAsStandby(primary: StandbyOf): Promise<void> {
    if (!this.recipe.follow) throw new Error(`a ${this.kind} server cannot follow a primary`);
    await this.down();
    this.recipe.follow(this.dir, primary);
    await this.up();
  }

  pause(): Promise<void> {
    this.process?.pause();
    return Promise.resolve();
  }

  resume(): Promise<void> {
    this.process?.resume();
    return Promise.resolve();
  }

  /** The server's process id, while it runs (the benchmark reads its CPU time). */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  serverLog(): string {
    try {
      return readFileSync(join(this.dir, 'server.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    await this.process?.stop();
    this.process = undefined;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

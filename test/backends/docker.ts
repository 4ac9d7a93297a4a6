/**
 * Backends as containers, where a Docker engine answers: redis:7, mongo:7 (a one-member replica set), postgres:16,
 * chrislusf/seaweedfs:4.48, started by testcontainers on a fixed host port so a restart keeps the address.
 */
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { freePort } from './ports.js';
import { waitUntilReady } from './probe.js';
import { newS3Admin, s3Url, WEED_SERVER_FLAGS } from './seaweedfs.js';
import type { BackendEndpoint, BackendKind, BackendOptions, OwnedBackend, RestartOptions } from './types.js';
import type { GenericContainer, StartedTestContainer } from 'testcontainers';

/** True when a Docker engine answers `GET /_ping` within `timeoutMs`. */
export function dockerAnswers(timeoutMs: number, dockerHost: string | undefined): Promise<boolean> {
  let target: { socketPath: string } | { host: string; port: number };
  if (!dockerHost || dockerHost.startsWith('unix://')) {
    target = { socketPath: dockerHost ? dockerHost.slice('unix://'.length) : '/var/run/docker.sock' };
  } else if (dockerHost.startsWith('tcp://')) {
    const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  } else {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

interface ImageRecipe {
  image: string;
  port: number;
  username: string;
  /** Generates the admin credentials, when the username is not fixed (SeaweedFS's access key id). */
  newAdmin?(): { username: string; password: string };
  url(host: string, port: number, password: string, username: string): string;
  /** `port` is the host's; with `samePortInside`, the server listens on it inside the container too. */
  configure(
    container: GenericContainer,
    password: string,
    options: BackendOptions,
    username: string,
    port: number,
  ): GenericContainer;
  /**
   * The server must know the address clients reach it at (a replica set's member): it listens inside on the host's
   * port.
   */
  samePortInside?: boolean;
  /** Run once the server answers on its port (e.g. `rs.initiate`). */
  afterStart?(container: StartedTestContainer, password: string, port: number): Promise<void>;
}

/**
 * MongoDB as the store runs in production: a replica set (here of one member, `rs0`), with auth,
 * so a keyfile; the member's address is the one the host reaches (`127.0.0.1:<port>`).
 */
const MONGO_REPLICA_SET = 'rs0';

const recipes: Record<BackendKind, ImageRecipe> = {
  redis: {
    image: 'redis:7',
    port: 6379,
    username: 'default',
    url: (host, port, password) => `redis://default:${password}@${host}:${port}`,
    configure: (c, password, options) =>
      c.withCommand([
        'redis-server',
        '--requirepass',
        password,
        '--save',
        '',
        '--appendonly',
        'no',
        ...(options.redisArgs ?? []),
      ]),
  },
  mongodb: {
    image: 'mongo:7',
    port: 27017,
    username: 'admin',
    url: (host, port, password) => `mongodb://admin:${password}@${host}:${port}/?authSource=admin`,
    samePortInside: true,
    configure: (c, password, _options, _username, port) =>
      c
        .withEnvironment({
          MONGO_INITDB_ROOT_USERNAME: 'admin',
          MONGO_INITDB_ROOT_PASSWORD: password,
          HF_KEY: randomBytes(32).toString('base64'),
        })
        .withEntrypoint(['bash', '-c'])
        .withCommand([
          'echo "$HF_KEY" > /tmp/rs.key && chmod 400 /tmp/rs.key && chown 999:999 /tmp/rs.key && ' +
            `exec docker-entrypoint.sh mongod --replSet ${MONGO_REPLICA_SET} --keyFile /tmp/rs.key --bind_ip_all --port ${port}`,
        ]),
    afterStart: async (container, password, port) => {
      const member = `127.0.0.1:${port}`;
      const script = `try { rs.status().ok } catch (e) { rs.initiate({ _id: '${MONGO_REPLICA_SET}', members: [{ _id: 0, host: '${member}' }] }) }`;
      const result = await container.exec([
        'mongosh',
        '--quiet',
        '--port',
        String(port),
        '-u',
        'admin',
        '-p',
        password,
        '--authenticationDatabase',
        'admin',
        '--eval',
        script,
      ]);
      if (result.exitCode !== 0) throw new Error(`rs.initiate failed: ${result.output}`);
      // writes wait for a primary: the member elects itself within seconds
      const primary = `for (let i = 0; i < 60 && !db.hello().isWritablePrimary; i++) sleep(500); if (!db.hello().isWritablePrimary) quit(1)`;
      const elected = await container.exec([
        'mongosh',
        '--quiet',
        '--port',
        String(port),
        '-u',
        'admin',
        '-p',
        password,
        '--authenticationDatabase',
        'admin',
        '--eval',
        primary,
      ]);
      if (elected.exitCode !== 0)
        throw new Error(`the replica set ${MONGO_REPLICA_SET} elected no primary: ${elected.output}`);
    },
  },
  postgres: {
    image: 'postgres:16',
    port: 5432,
    username: 'postgres',
    url: (host, port, password) => `postgres://postgres:${password}@${host}:${port}/postgres`,
    configure: (c, password, options) =>
      c
        .withEnvironment({ POSTGRES_PASSWORD: password })
        .withCommand([
          'postgres',
          '-c',
          'fsync=off',
          '-c',
          'max_connections=200',
          ...Object.entries(options.postgresSettings ?? {}).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
        ]),
  },
  // The image's entrypoint script is bypassed: `weed server` with the same flags as the local
  // process, inside the container on SeaweedFS's default ports, S3 (8333) bound for the host.
  s3: {
    image: 'chrislusf/seaweedfs:4.48',
    port: 8333,
    username: '',
    newAdmin: newS3Admin,
    url: (host, port, password, username) => s3Url(host, port, { username, password }),
    configure: (c, password, _options, username) =>
      c
        .withEnvironment({ AWS_ACCESS_KEY_ID: username, AWS_SECRET_ACCESS_KEY: password })
        .withEntrypoint(['/usr/bin/weed'])
        .withCommand([
          'server',
          '-dir=/data',
          '-ip=127.0.0.1',
          '-ip.bind=0.0.0.0',
          '-s3.port=8333',
          ...WEED_SERVER_FLAGS,
        ]),
  },
};

export class ContainerServer implements OwnedBackend {
  readonly origin = 'docker' as const;
  readonly admin: { username: string; password: string };
  readonly url: string;
  readonly flavor: string;
  readonly host: string;
  private container: StartedTestContainer | undefined;
  private paused = false;

  private constructor(
    readonly kind: BackendKind,
    readonly port: number,
    private readonly options: BackendOptions,
  ) {
    const r = recipes[kind];
    this.admin = r.newAdmin?.() ?? { username: r.username, password: randomBytes(18).toString('base64url') };
    this.host = '127.0.0.1';
    this.url = r.url(this.host, port, this.admin.password, this.admin.username);
    this.flavor = r.image;
  }

  static async start(kind: BackendKind, options: BackendOptions = {}): Promise<ContainerServer> {
    const server = new ContainerServer(kind, await freePort(), options);
    await server.launch();
    return server;
  }

  endpoint(): BackendEndpoint {
    const { kind, origin, flavor, host, port, admin, url } = this;
    return { kind, origin, flavor, host, port, admin, url };
  }

  private async launch(): Promise<void> {
    const { GenericContainer } = await import('testcontainers');
    const r = recipes[this.kind];
    const container = r
      .configure(new GenericContainer(r.image), this.admin.password, this.options, this.admin.username, this.port)
      .withExposedPorts({ container: r.samePortInside ? this.port : r.port, host: this.port });
    this.container = await container.start();
    await waitUntilReady(this.endpoint(), { timeoutMs: 60_000 });
    await r.afterStart?.(this.container, this.admin.password, this.port);
  }

  async restart(options: RestartOptions = {}): Promise<void> {
    if (this.paused) await this.resume();
    if (options.keepData === false) {
      await this.container?.stop();
      await this.launch();
      return;
    }
    await this.container?.restart();
    await waitUntilReady(this.endpoint(), { timeoutMs: 60_000 });
  }

  async down(): Promise<void> {
    if (this.paused) await this.resume();
    await (await this.dockerContainer()).stop();
  }

  async up(options: RestartOptions = {}): Promise<void> {
    if (options.keepData === false) {
      await this.container?.stop();
      await this.launch();
      return;
    }
    await (await this.dockerContainer()).start();
    await waitUntilReady(this.endpoint(), { timeoutMs: 60_000 });
  }

  private async dockerContainer() {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const client = await getContainerRuntimeClient();
    if (!this.container) throw new Error(`${this.kind} container is not running`);
    return client.container.getById(this.container.getId());
  }

  async pause(): Promise<void> {
    await (await this.dockerContainer()).pause();
    this.paused = true;
  }

  async resume(): Promise<void> {
    await (await this.dockerContainer()).unpause();
    this.paused = false;
  }

  async stop(): Promise<void> {
    if (this.paused) await this.resume();
    await this.container?.stop();
    this.container = undefined;
  }
}

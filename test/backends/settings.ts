/**
 * The one place the test harness reads its environment. Documented in docs/contributing.md.
 */
import { existsSync, readdirSync } from 'node:fs';
import type { BackendKind } from './types.js';

export type BackendMode = 'auto' | 'docker' | 'local';

export interface TestBackendSettings {
  /** Backends given by URL are used as they are for the shared instances. */
  urls: Partial<Record<BackendKind, string>>;
  /** `HOLDFAST_TEST_REDIS_CLUSTER_URLS`: the nodes of a Redis Cluster used as the shared one (comma-separated). */
  redisClusterUrls: string | undefined;
  mode: BackendMode;
  /** How long to wait for a Docker engine to answer before falling back to local processes. */
  dockerProbeMs: number;
  /** `DOCKER_HOST`, when set. */
  dockerHost: string | undefined;
  binaries: {
    redisServer: string;
    redisCli: string;
    ferretdb: string;
    postgresBinDir: string;
    weed: string;
    prometheus: string;
    promtool: string;
  };
  /** Parent directory for throw-away data directories. */
  tmpRoot: string;
  /** What `test/integration/engine/upgrade-from-release.test.ts` measures (it runs only when `from` is given). */
  upgrade: {
    /** `HOLDFAST_UPGRADE_FROM`: a checkout of the earlier release (with its `node_modules`). */
    from: string | undefined;
    /** `HOLDFAST_UPGRADE_TO`: the checkout started second (default: this one). */
    to: string | undefined;
    /** `HOLDFAST_UPGRADE_NEW_KEY=1`: the fingerprint key file made anew between the two. */
    newKey: boolean;
  };
}

function modeFrom(value: string | undefined): BackendMode {
  if (value === undefined || value === '' || value === 'auto') return 'auto';
  if (value === 'docker' || value === 'local') return value;
  throw new Error(`HOLDFAST_TEST_BACKENDS must be auto, docker or local, not "${value}"`);
}

/** The newest PostgreSQL Debian installed (`/usr/lib/postgresql/<major>/bin`). */
function debianPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => /^\d+$/.test(d))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  return majors.length > 0 ? `${root}/${majors[0]}/bin` : `${root}/15/bin`;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): TestBackendSettings {
  const urls: Partial<Record<BackendKind, string>> = {};
  if (env.HOLDFAST_TEST_REDIS_URL) urls.redis = env.HOLDFAST_TEST_REDIS_URL;
  if (env.HOLDFAST_TEST_MONGODB_URL) urls.mongodb = env.HOLDFAST_TEST_MONGODB_URL;
  if (env.HOLDFAST_TEST_POSTGRES_URL) urls.postgres = env.HOLDFAST_TEST_POSTGRES_URL;
  if (env.HOLDFAST_TEST_S3_URL) urls.s3 = env.HOLDFAST_TEST_S3_URL;
  const home = env.HOME ?? '/root';
  const gobin = env.GOBIN ?? `${env.GOPATH ?? `${home}/go`}/bin`;
  return {
    urls,
    redisClusterUrls: env.HOLDFAST_TEST_REDIS_CLUSTER_URLS,
    mode: modeFrom(env.HOLDFAST_TEST_BACKENDS),
    dockerProbeMs: 1000,
    dockerHost: env.DOCKER_HOST,
    binaries: {
      redisServer: env.HOLDFAST_REDIS_SERVER ?? 'redis-server',
      redisCli: env.HOLDFAST_REDIS_CLI ?? 'redis-cli',
      ferretdb: env.HOLDFAST_FERRETDB ?? `${gobin}/ferretdb`,
      postgresBinDir: env.HOLDFAST_POSTGRES_BIN ?? debianPostgresBin(),
      weed: env.HOLDFAST_WEED ?? `${gobin}/weed`,
      prometheus: env.HOLDFAST_PROMETHEUS ?? 'prometheus',
      promtool: env.HOLDFAST_PROMTOOL ?? 'promtool',
    },
    tmpRoot: env.TMPDIR ?? '/tmp',
    upgrade: {
      from: env.HOLDFAST_UPGRADE_FROM || undefined,
      to: env.HOLDFAST_UPGRADE_TO || undefined,
      newKey: env.HOLDFAST_UPGRADE_NEW_KEY === '1',
    },
  };
}

/** The environment for a child process the harness starts (a node script, a tool): its own, plus `extra`. */
export function childEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

/**
 * What of this process's environment a server the harness starts is given: where to find programs and libraries,
 * where to write, the locale and who runs it. Nothing else: a variable meant for the tests (`DEBUG`, a `PG*` or
 * `WEED_*` setting, a proxy) must not change how a server starts (`DEBUG` set made SeaweedFS's `weed` refuse to).
 */
const SERVER_VARIABLES = /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z]+|LD_LIBRARY_PATH)$/;

/** The environment for a server process the harness starts (see {@link SERVER_VARIABLES}), plus `extra`. */
export function serverEnvironment(
  extra: Record<string, string> = {},
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const kept = Object.entries(from).filter(([name, value]) => value !== undefined && SERVER_VARIABLES.test(name));
  return { ...Object.fromEntries(kept), ...extra };
}

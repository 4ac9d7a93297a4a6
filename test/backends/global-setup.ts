/**
 * vitest global setup for integration tests: one shared Redis, MongoDB wire server,
 * PostgreSQL and S3 server (SeaweedFS) for the whole run, started concurrently, a run directory for the instances tests
 * start themselves,
 * and on teardown nothing left behind.
 */
import type { TestProject } from 'vitest/node';
import { allStarted } from './all-started.js';
import { createRunDir, reapRunDir, sweepStaleRunDirs, type RunDir } from './run-dir.js';
import { readSettings, type TestBackendSettings } from './settings.js';
import { endpointFromUrl, KINDS, startOwned, useDocker } from './provision.js';
import type { BackendEndpoint, BackendKind, OwnedBackend } from './types.js';
import { clusterFromEnvironment, LocalRedisCluster, type RedisClusterEndpoint } from './redis-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    backends: Record<BackendKind, BackendEndpoint>;
    backendRunDir: string;
    backendDocker: boolean;
    redisCluster: RedisClusterEndpoint;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const settings = readSettings();
  await sweepStaleRunDirs(settings.tmpRoot);
  const run = createRunDir(settings.tmpRoot);
  const owned: Array<Pick<OwnedBackend, 'stop'>> = [];
  const teardown = async () => {
    await Promise.allSettled(owned.map((b) => b.stop()));
    const leftovers = await reapRunDir(run);
    if (leftovers.length > 0) console.warn(`[backends] stopped servers a test left running: ${leftovers.join(', ')}`);
  };
  try {
    const docker = await useDocker(settings);
    // the cluster starts beside the others (about 3 s: six redis-server processes, joined)
    const clusterStarting = Promise.resolve(clusterFromEnvironment(settings) ?? startCluster(run, settings, owned));
    const starting = KINDS.map(async (kind): Promise<[BackendKind, BackendEndpoint]> => {
      const url = settings.urls[kind];
      if (url) return [kind, endpointFromUrl(kind, url)];
      const backend = await startOwned(kind, run, settings, docker);
      owned.push(backend);
      return [kind, backend.endpoint()];
    });
    // every start settled before a failure is told: the clean-up below then stops all that started
    await allStarted<unknown>([clusterStarting, ...starting]);
    const cluster = await clusterStarting;
    const entries = await Promise.all(starting);
    const backends = Object.fromEntries(entries) as Record<BackendKind, BackendEndpoint>;
    console.log(`[backends] redis cluster: ${cluster.flavor} (${cluster.origin})`);
    project.provide('redisCluster', cluster);
    console.log(
      `[backends] ${KINDS.map((k) => `${k}: ${backends[k].flavor} (${backends[k].origin}, port ${backends[k].port})`).join('; ')}`,
    );
    project.provide('backends', backends);
    project.provide('backendRunDir', run.root);
    project.provide('backendDocker', docker);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

async function startCluster(
  run: RunDir,
  settings: TestBackendSettings,
  owned: Array<Pick<OwnedBackend, 'stop'>>,
): Promise<RedisClusterEndpoint> {
  const cluster = await LocalRedisCluster.start(run, settings);
  owned.push(cluster);
  return cluster.endpoint;
}

/**
 * Real backends for integration tests.
 *
 * - `sharedBackend(kind)`: the run's shared server; tests use their own database, key
 *   prefix or login names on it and must not restart it.
 * - `ownBackend(kind)`: a server only this test uses; it may restart, pause or stop it.
 *   It is stopped after the test file (and by the run's teardown if the worker dies).
 */
import { afterAll, inject } from 'vitest';
import { instanceDir } from './run-dir.js';
import { readSettings } from './settings.js';
import { startOwned } from './provision.js';
import type { BackendEndpoint, BackendKind, BackendOptions, OwnedBackend } from './types.js';
import { LocalRedisCluster, type RedisClusterEndpoint, type RedisClusterOptions } from './redis-cluster.js';
import { LocalRedisReplicas, type RedisReplicasOptions } from './redis-replicas.js';
import { LocalServer } from './local-server.js';

export type { BackendEndpoint, BackendKind, BackendOptions, OwnedBackend } from './types.js';
export type { RedisClusterEndpoint } from './redis-cluster.js';

export function sharedBackend(kind: BackendKind): BackendEndpoint {
  return inject('backends')[kind];
}

/**
 * The run's shared Redis Cluster (3 masters, 3 replicas, or `HOLDFAST_TEST_REDIS_CLUSTER_URLS`): tests use their own
 * prefix on it and never kill or flush it.
 */
export function sharedRedisCluster(): RedisClusterEndpoint {
  return inject('redisCluster');
}

const started: Array<{ stop(): Promise<void> }> = [];
afterAll(async () => {
  await Promise.allSettled(started.splice(0).map((b) => b.stop()));
});

/** Starts a backend for this test file alone; it is stopped after the file's tests. */
export async function ownBackend(kind: BackendKind, options: BackendOptions = {}): Promise<OwnedBackend> {
  const backend = await startOwned(
    kind,
    { root: inject('backendRunDir') },
    readSettings(),
    inject('backendDocker'),
    options,
  );
  started.push(backend);
  return backend;
}

/** A throw-away directory inside the run directory: removed by the run's teardown whatever happens. */
export function testDir(name: string): string {
  return instanceDir({ root: inject('backendRunDir') }, name);
}

/**
 * Starts a Redis Cluster for this test file alone (local processes): it may kill its nodes or flush it. Stopped after
 * the file's tests.
 */
export async function ownRedisCluster(options: RedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const cluster = await LocalRedisCluster.start({ root: inject('backendRunDir') }, readSettings(), options);
  started.push(cluster);
  return cluster;
}

/**
 * Starts a primary with replicas (and Sentinels, when `options.sentinels`) for this test file
 * alone (local processes): it may kill, pause or restart its nodes. Stopped after the file's tests.
 */
export async function ownRedisReplicas(options: RedisReplicasOptions = {}): Promise<LocalRedisReplicas> {
  const set = await LocalRedisReplicas.start({ root: inject('backendRunDir') }, readSettings(), options);
  started.push(set);
  return set;
}

/**
 * A PostgreSQL primary and a streaming standby of it (`pg_basebackup -R`), local processes for
 * this test file alone: it may promote the standby (`standby.promote()`) and stop the primary.
 * Stopped after the file's tests.
 */
export async function ownPostgresPair(): Promise<{ primary: LocalServer; standby: LocalServer }> {
  const run = { root: inject('backendRunDir') };
  const primary = await LocalServer.start('postgres', run, readSettings());
  started.push(primary);
  const standby = await LocalServer.start('postgres', run, readSettings(), {
    postgresStandbyOf: { port: primary.port, password: primary.admin.password },
  });
  started.push(standby);
  return { primary, standby };
}

/**
 * vitest global setup for integration tests: one shared Redis, MongoDB wire server,
 * PostgreSQL and S3 server (SeaweedFS) for the whole run, started concurrently, a run directory for the instances tests start themselves,
 * and on teardown nothing left behind.
 */
import type { TestProject } from 'vitest/node';
import { createRunDir, reapRunDir, sweepStaleRunDirs } from './run-dir.js';
import { readSettings } from './settings.js';
import { endpointFromUrl, KINDS, startOwned, useDocker } from './provision.js';
import type { BackendEndpoint, BackendKind, OwnedBackend } from './types.js';

declare module 'vitest' {
  export interface ProvidedContext {
    backends: Record<BackendKind, BackendEndpoint>;
    backendRunDir: string;
    backendDocker: boolean;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const settings = readSettings();
  await sweepStaleRunDirs(settings.tmpRoot);
  const run = createRunDir(settings.tmpRoot);
  const owned: OwnedBackend[] = [];
  const teardown = async () => {
    await Promise.allSettled(owned.map((b) => b.stop()));
    const leftovers = await reapRunDir(run);
    if (leftovers.length > 0) console.warn(`[backends] stopped servers a test left running: ${leftovers.join(', ')}`);
  };
  try {
    const docker = await useDocker(settings);
    const entries = await Promise.all(
      KINDS.map(async (kind): Promise<[BackendKind, BackendEndpoint]> => {
        const url = settings.urls[kind];
        if (url) return [kind, endpointFromUrl(kind, url)];
        const backend = await startOwned(kind, run, settings, docker);
        owned.push(backend);
        return [kind, backend.endpoint()];
      }),
    );
    const backends = Object.fromEntries(entries) as Record<BackendKind, BackendEndpoint>;
    console.log(`[backends] ${KINDS.map((k) => `${k}: ${backends[k].flavor} (${backends[k].origin}, port ${backends[k].port})`).join('; ')}`);
    project.provide('backends', backends);
    project.provide('backendRunDir', run.root);
    project.provide('backendDocker', docker);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

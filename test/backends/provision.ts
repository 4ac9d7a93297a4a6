/**
 * Chooses where each test backend comes from: a URL from the environment, else a container
 * where a Docker engine answers, else a local process.
 */
import { dockerAnswers, ContainerServer } from './docker.js';
import { LocalServer } from './local-server.js';
import type { RunDir } from './run-dir.js';
import type { TestBackendSettings } from './settings.js';
import type { BackendEndpoint, BackendKind, BackendOptions, OwnedBackend } from './types.js';

export const KINDS: readonly BackendKind[] = ['redis', 'mongodb', 'postgres', 's3'];

export async function useDocker(settings: TestBackendSettings): Promise<boolean> {
  if (settings.mode === 'local') return false;
  const answers = await dockerAnswers(settings.dockerProbeMs, settings.dockerHost);
  if (settings.mode === 'docker' && !answers) {
    throw new Error('HOLDFAST_TEST_BACKENDS=docker but no Docker engine answered within a second');
  }
  return answers;
}

/**
 * A backend given by URL: used as it is, never restarted or paused. For `s3` the URL is
 * `http://<accessKeyId>:<secretKey>@host:port` (the key pair percent-encoded).
 */
export function endpointFromUrl(kind: BackendKind, raw: string): BackendEndpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`HOLDFAST_TEST_${kind.toUpperCase()}_URL is not a URL`);
  }
  const defaults: Record<BackendKind, number> = { redis: 6379, mongodb: 27017, postgres: 5432, s3: 8333 };
  return {
    kind,
    origin: 'url',
    flavor: `${kind} at ${url.host}`,
    host: url.hostname,
    port: Number(url.port || defaults[kind]),
    admin: { username: decodeURIComponent(url.username || 'default'), password: decodeURIComponent(url.password) },
    url: raw,
  };
}

/** Starts a backend the caller owns and must stop. */
export async function startOwned(
  kind: BackendKind,
  run: RunDir,
  settings: TestBackendSettings,
  docker: boolean,
  options: BackendOptions = {},
): Promise<OwnedBackend & { endpoint(): BackendEndpoint }> {
  return docker ? ContainerServer.start(kind, options) : LocalServer.start(kind, run, settings, options);
}

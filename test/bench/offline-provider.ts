/**
 * A configuration of one `redis-acl` provider whose servers are never reached, for the
 * benchmarks that measure reading contributions without servers (`parse-contributions.ts`,
 * `sync-memory.ts`): secrets, a fingerprint key and `holdfast.yaml` in `dir`, the contributions
 * file at `contributions/cache.yaml`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTERS } from '../../src/adapters/registry.js';
import type { HoldfastConfig } from '../../src/config/config.js';
import { loadConfig } from '../../src/config/load-config.js';

/** As `bench-env.ts` declares its consumers' commands. */
export const COMMANDS = ['+@read', '+@write', '+@connection'];

/** One consumer's item in a contributions file of the plain shape. */
export function contributionItem(i: number, key = `c${String(i).padStart(6, '0')}:*`): string {
  const id = `c${String(i).padStart(6, '0')}`;
  return `  - id: ${id}\n    login: hf_${id}\n    secret: ../grants/${id}.secret\n    values: { keys: ["${key}"], commands: ${JSON.stringify(COMMANDS)} }`;
}

/**
 * Writes the configuration into `dir` and loads it; the contributions file is the caller's to write (its path is
 * returned).
 */
export async function offlineProvider(dir: string): Promise<{ config: HoldfastConfig; contributions: string }> {
  for (const sub of ['grants', 'secrets', 'contributions']) mkdirSync(join(dir, sub));
  for (const name of ['queue', 'store', 'cache'])
    writeFileSync(join(dir, 'secrets', name), 'a-long-enough-password', { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/fingerprint.key'), Buffer.alloc(32, 1), { mode: 0o600 });
  writeFileSync(
    join(dir, 'holdfast.yaml'),
    [
      'queue: { url: "redis://127.0.0.1:1", passwordFile: secrets/queue }',
      'store: { url: "mongodb://127.0.0.1:1/", passwordFile: secrets/store }',
      'fingerprintKeyFile: secrets/fingerprint.key',
      'providers:',
      '  - name: cache',
      '    adapter: redis-acl',
      '    admin: { url: "redis://127.0.0.1:3", passwordFile: secrets/cache }',
      '    contributions: contributions/cache.yaml',
      '    secretsRoot: grants',
      `    policy: { keyPrefix: "{id}:", allowedCommands: ${JSON.stringify(COMMANDS)} }`,
    ].join('\n') + '\n',
  );
  const config = await loadConfig(join(dir, 'holdfast.yaml'), {
    adapters: ADAPTERS,
    environment: { stdoutIsTTY: false },
  });
  return { config, contributions: join(dir, 'contributions/cache.yaml') };
}

/**
 * `holdfast plan`: what `holdfast run` would do with the contributions in place, or with proposed
 * ones (`--contributions cache=proposed.yaml`), against the records and the live backends. Read
 * only: the store is scanned, the queue's Redis read (a person's confirmation of held-back
 * removals, only when the guard would hold one back), each backend asked its deep check. Exits 0
 * when nothing would change, 1 when something would, 2 when anything is refused, invalid or
 * could not be asked.
 */
import { resolve } from 'node:path';
import { connectAdapter, type HoldfastConfig } from '../config/config.js';
import { connectCoordination, connectStore } from '../engine/connect.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import type { Adapter } from '../adapters/adapter.js';
import type { RemovalConfirmations } from '../queue/coordination.js';
import type { QueueRedis } from '../queue/bull-connection.js';
import { plan } from '../plan/plan.js';
import { formatPlan } from '../plan/format-plan.js';
import { printOut } from '../text/terminal-text.js';
import { load } from './load.js';

export interface PlanOptions {
  config?: string;
  json?: boolean;
  /** Ask every consumer kept the deep check, not only those whose light check did not pass. */
  deep?: boolean;
  /** `<provider>=<file>`, each once. */
  contributions?: string[];
}

/** The proposed files by provider; a provider the configuration does not have is a usage error. */
export function proposedFiles(
  config: Pick<HoldfastConfig, 'providers' | 'source'>,
  given: readonly string[],
): Map<string, string> {
  const files = new Map<string, string>();
  for (const pair of given) {
    const at = pair.indexOf('=');
    const [name, file] = at > 0 ? [pair.slice(0, at), pair.slice(at + 1)] : ['', ''];
    if (!name || !file)
      throw new HoldfastError(
        'CONFIG_INVALID',
        `--contributions ${JSON.stringify(pair)}: give <provider>=<file>, e.g. cache=proposed/cache.yaml`,
      );
    if (!config.providers.some((p) => p.name === name)) {
      throw new HoldfastError(
        'PROVIDER_UNKNOWN',
        `--contributions ${JSON.stringify(pair)}: no provider "${name}" in ${config.source}; known: ${config.providers.map((p) => p.name).join(', ')}`,
      );
    }
    if (files.has(name)) throw new HoldfastError('CONFIG_INVALID', `--contributions: provider "${name}" given twice`);
    files.set(name, resolve(file));
  }
  return files;
}

/** The queue's Redis, reached only when a confirmation is asked for; one GET per provider held back. */
function lazyConfirmations(config: HoldfastConfig): {
  confirmations: Pick<RemovalConfirmations, 'confirmedRemovals'>;
  close: () => void;
} {
  let redis: QueueRedis | undefined;
  let reads: Pick<RemovalConfirmations, 'confirmedRemovals'> | undefined;
  const timeoutMs = 10_000;
  return {
    confirmations: {
      confirmedRemovals: (provider) => {
        if (reads === undefined) {
          const connected = connectCoordination(config, {
            maxRetriesPerRequest: 1,
            connectTimeout: timeoutMs,
            commandTimeout: timeoutMs,
            retryStrategy: (n) => (n > 3 ? null : 200),
          });
          redis = connected.redis;
          reads = connected.coordination.notes;
        }
        return reads.confirmedRemovals(provider);
      },
    },
    close: () => redis?.disconnect(),
  };
}

export async function planCommand(options: PlanOptions): Promise<number> {
  // nothing is created: not even a missing fingerprint key (no rotation can be told without one)
  const { config, scrubber } = await load(options.config, { readOnly: true });
  const proposed = proposedFiles(config, options.contributions ?? []);
  scrubber.learn(...config.providers.flatMap((p) => (p.adapter.secretForms ? [p.adapter.secretForms] : [])));
  const { client, store } = await connectStore(config, { create: false });
  const adapters: Adapter[] = [];
  const queue = lazyConfirmations(config);
  try {
    const report = await plan({
      config,
      proposed,
      store,
      depsOf: (provider) => {
        const adapter = connectAdapter(provider);
        adapters.push(adapter);
        return {
          fingerprintKey: config.fingerprintKey,
          confirmations: queue.confirmations,
          adapter,
          scrubber,
          configArgs: options.config === undefined ? '' : ` -c ${options.config}`,
          deep: options.deep === true,
          now: () => new Date(),
        };
      },
    });
    printOut(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatPlan(report)}\n`);
    return report.exitCode;
  } finally {
    queue.close();
    await Promise.allSettled(adapters.map((a) => a.close()));
    await client.close().catch(() => undefined);
  }
}

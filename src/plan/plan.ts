/**
 * `holdfast plan` over every provider of a configuration: the records read once (a scan, as the
 * start-up's), each provider planned against its own (`plan-provider.ts`).
 */
import type { HoldfastConfig, ProviderConfig } from '../config/config.js';
import { isUnreadable, type ConsumerRecord } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import { planProvider, readProposal, type PlanDeps } from './plan-provider.js';
import { planExitCode, type PlanReport } from './plan-report.js';

export interface PlanInputs {
  config: HoldfastConfig;
  /** Proposed contributions files by provider name, planned instead of the ones in place. */
  proposed: ReadonlyMap<string, string>;
  /** The store, read only: a scan of its records. */
  store: Pick<ConsumerStore, 'scan'>;
  /** Each provider's deps (its adapter among them). */
  depsOf: (provider: ProviderConfig) => PlanDeps;
}

/** Every readable record by provider and key, and how many of each provider's cannot be read. */
async function recordsByProvider(
  store: Pick<ConsumerStore, 'scan'>,
): Promise<{ records: Map<string, Map<string, ConsumerRecord>>; unreadable: Map<string, number> }> {
  const records = new Map<string, Map<string, ConsumerRecord>>();
  const unreadable = new Map<string, number>();
  for await (const record of store.scan()) {
    if (isUnreadable(record)) {
      const provider = record._id.split('/')[0] ?? '';
      unreadable.set(provider, (unreadable.get(provider) ?? 0) + 1);
      continue;
    }
    let mine = records.get(record.provider);
    if (mine === undefined) records.set(record.provider, (mine = new Map<string, ConsumerRecord>()));
    mine.set(record._id, record);
  }
  return { records, unreadable };
}

export async function plan({ config, proposed, store, depsOf }: PlanInputs): Promise<PlanReport> {
  const files = config.providers.map((provider) => proposed.get(provider.name) ?? provider.contributionsPath);
  // the files read while the store streams its records: neither waits for the other
  const [{ records, unreadable }, ...reads] = await Promise.all([
    recordsByProvider(store),
    ...config.providers.map((provider, i) => readProposal(provider, files[i]!)),
  ]);
  const providers = await Promise.all(
    config.providers.map((provider, i) =>
      planProvider(
        provider,
        files[i]!,
        reads[i]!,
        records.get(provider.name) ?? new Map<string, ConsumerRecord>(),
        unreadable.get(provider.name) ?? 0,
        depsOf(provider),
      ),
    ),
  );
  return { providers, exitCode: planExitCode(providers) };
}

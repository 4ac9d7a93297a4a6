/**
 * One job, one consumer. A job holdfast did not write is dropped first, or its ticket not used
 * (`job-trust.ts`). Then the worker takes the consumer's lock, which tells it what the queue's
 * Redis knows (the record's revision and what its checks learned), and the job's work runs
 * under it (`consumer-run.ts`); the lock's release keeps what its checks learned.
 *
 * Whatever the job cannot do now is an outcome, `later`: a busy consumer, a routine check that
 * changed nothing, a lost lock or compare-and-swap, a record store that does not answer (a wait
 * whose ticket is trusted still runs its routine check then: `consumer-run.ts`). A job that
 * throws failed for what retries cannot fix.
 */
import { isHoldfastError } from '../src/errors/holdfast-error.js';
import type { ConsumerJobData } from '../src/schedule/consumer-queue.js';
import { providerOf } from '../src/store/consumer-key.js';
import { ConsumerRun, type Claimed, type RunDeps } from './consumer-run.js';
import type { JobTrust, Trust } from './job-trust.js';
import { retryLater, type JobOutcome } from './job-outcome.js';
import type { ProviderRuntime } from './provider-runtime.js';

export type { JobOutcome } from './job-outcome.js';

export interface JobDeps extends RunDeps {
  providers: ReadonlyMap<string, ProviderRuntime>;
  /** Judges what a job may be taken at its word for (see `job-trust.ts`). */
  trust: JobTrust;
}

/** What a round found out for a job before handing it over (`round-checks.ts`): its trust judged, its lock taken. */
export interface Given {
  trust: Trust;
  claimed?: Claimed;
}

export async function runConsumerJob(job: ConsumerJobData, deps: JobDeps, given?: Given): Promise<JobOutcome> {
  const trust = given?.trust ?? deps.trust.judge(job);
  if (trust === 'none') return { kind: 'rejected' };
  const providerName = providerOf(job.key);
  const provider = deps.providers.get(providerName);
  if (!provider) {
    deps.logger.warn({ consumer: job.key }, `no provider "${providerName}" in this configuration; job skipped`);
    return { kind: 'unknown-provider' };
  }
  // nothing is done from a record that may be stale; a wait whose ticket is trusted runs its
  // routine check (and heals what the record says was applied) without the store
  if (deps.storeDown?.() && !(job.kind === 'wait' && trust === 'whole')) return retryLater('store-down', deps.now());
  try {
    return await ConsumerRun.underLock(job, trust === 'whole', provider, deps, given?.claimed);
  } catch (error) {
    const later = laterFor(error, deps);
    if (later) return later;
    throw error;
  }
}

/**
 * An error that means "not now": the lock or a compare-and-swap lost, or the store stopped answering (said once by its
 * watch).
 */
function laterFor(error: unknown, deps: JobDeps): JobOutcome | undefined {
  if (isHoldfastError(error, 'STORE_UNAVAILABLE') && deps.storeDown?.())
    return retryLater('store-down', new Date(), { error });
  if (isHoldfastError(error, 'REVISION_CONFLICT')) return retryLater('conflict', new Date(), { error });
  return undefined;
}

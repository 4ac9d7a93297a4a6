/**
 * A job's data as this release reads it, at the edge where a worker gets it from BullMQ. A wait job queued by an
 * earlier release names its kind as that release did (formerly `timer`): it is read as a wait job. The seal on its
 * ticket does not cover the kind, so a ticket sealed then is still good.
 */
import type { ConsumerJobData } from './consumer-queue.js';

/** Each former kind of job and the kind it is now. */
const FORMER_KINDS: ReadonlyMap<unknown, ConsumerJobData['kind']> = new Map([['timer', 'wait']]); // formerly

/** `data` in this release's words: a former kind read as the kind it is now; anything else unchanged. */
export function jobDataOf(data: ConsumerJobData): ConsumerJobData {
  const kind = FORMER_KINDS.get((data as { kind?: unknown } | null | undefined)?.kind);
  return kind === undefined ? data : ({ ...data, kind } as ConsumerJobData);
}

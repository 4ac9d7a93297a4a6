/**
 * What the dashboard shows of each provider's last node event (a node restarted, re-initialised, promoted, answering
 * again: rule 13): the event, how many of its consumers are still suspect (not asked since), and a few of them by name
 * to follow (one SRANDMEMBER of at most {@link SUSPECTS_LISTED} per provider with suspects, never the whole set). The
 * event is kept after all are asked, so the timeline still marks it. Read within a deadline: a queue Redis that does not
 * answer leaves the page saying so, never hung.
 */
import type { SignalsPart, SuspectEvent } from '../queue/coordination.js';
import { TIMELINE_READ_MS } from '../history/timeline-read.js';
import { within } from '../status/read-within.js';

/** Suspect consumers named on the page, per provider; the others are counted. */
export const SUSPECTS_LISTED = 50;

/** A provider's last node event as the page shows it. */
export interface NodeEventView {
  /** Its consumers suspect now (not asked since the event). */
  count: number;
  /** The last node event that made them suspect; null when none is known. */
  event: SuspectEvent | null;
  /** Up to {@link SUSPECTS_LISTED} of the suspects (consumer keys, as tenants named them: to escape), sorted. */
  sample: string[];
}

/** Each provider's last node event, by provider; null when the queue's Redis did not answer in time. */
export type NodeEvents = ReadonlyMap<string, NodeEventView> | null;

/** The node events of `providers`, with a bounded sample of each one's suspects, within `deadlineMs`. */
export async function readNodeEvents(
  signals: Pick<SignalsPart, 'suspects' | 'suspectSample'>,
  providers: readonly string[],
  deadlineMs = TIMELINE_READ_MS,
): Promise<NodeEvents> {
  const read = async (): Promise<Map<string, NodeEventView>> => {
    const suspects = await signals.suspects(providers);
    const views = await Promise.all(
      providers.map(async (p): Promise<[string, NodeEventView]> => {
        const { count, event } = suspects.get(p) ?? { count: 0, event: null };
        const sample = count > 0 ? await signals.suspectSample(p, SUSPECTS_LISTED) : [];
        return [p, { count, event, sample: [...new Set(sample)].sort().slice(0, SUSPECTS_LISTED) }];
      }),
    );
    return new Map(views);
  };
  const outcome = await within(read(), deadlineMs);
  return outcome.kind === 'answered' ? outcome.value : null;
}

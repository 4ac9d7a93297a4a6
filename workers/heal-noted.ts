/**
 * A heal of what the record says was applied (rule 3 of docs/architecture.md: the record is durable), noted rather than written: the
 * transitions the chart's steps marked on the ticket (`run-trail.ts`, `held → lost → held`) told
 * as written ones would be: the provider's timeline, the metrics, the log. Its finding is counted
 * toward the consumer being contested in the same round trip as the timeline's note, and said once
 * when it becomes so (`src/queue/contest.ts`).
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { duration } from '../machines/consumer-words.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { TimelineNotes } from '../src/queue/coordination.js';
import { contestedWords, findingWords, lossWaveMs, type Finding } from '../src/queue/contest.js';
import { timelineEventsOf } from '../src/queue/timeline-event.js';
import type { RunOutcome } from './consumer-outcome.js';
import type { ProviderRuntime } from './provider-runtime.js';

export interface HealNoteDeps {
  coordination: { readonly notes: TimelineNotes };
  observer?: Pick<WorkObserver, 'transition'> | undefined;
  /**
   * Told once per loss wave a heal's finding shows (its provider, the node it named, when the wave's first finding was):
   * its consumers not asked since become suspect.
   */
  onLossWave?: ((provider: string, node: string | undefined, since: number) => void) | undefined;
}

type Healed = Extract<RunOutcome, { kind: 'healed' }>;

/** Notes a heal on the ticket: its marked transitions on the timeline and in the metrics, its words in the log. */
export async function noteHeal(healed: Healed, deps: HealNoteDeps): Promise<void> {
  const { key, provider, log, trail } = healed;
  const first = trail[0]!;
  const last = trail[trail.length - 1]!;
  const finding = findingOf(key, provider, healed.found, first.at);
  const counted = await deps.coordination.notes.noteTimeline(
    trail.flatMap((entry, i) => timelineEventsOf(key, entry, trail.slice(0, i))),
    finding,
  );
  trail.forEach((entry, i) => deps.observer?.transition(provider.config.name, entry, trail.slice(0, i)));
  const states = [first.from, ...trail.map((entry) => entry.to)];
  const tookMs = last.at.getTime() - first.at.getTime();
  const { reason } = first;
  log.info(
    { from: first.from, to: last.to, via: states.slice(1, -1).join(' → '), reason, tookMs, recorded: false },
    `${states.join(' → ')}: ${reason ?? 'not held'}; applied again in ${duration(tookMs)} (not written: the record already says this spec and grant secret are applied)`,
  );
  if (counted && !counted.counted && counted.waveBegan)
    deps.onLossWave?.(
      provider.config.name,
      healed.found.type === 'NOT_HELD' ? healed.found.node : undefined,
      counted.waveSince ?? first.at.getTime(),
    );
  // said once: as it becomes contested, not at each further finding
  if (finding && counted?.counted && counted.became) {
    log.warn(
      { contested: true, findings: counted.findings, reason: finding.reason },
      contestedWords(key, counted.findings, finding.windowMs, finding.words),
    );
  }
}

/**
 * The heal's finding, counted toward its consumer being contested (`src/queue/contest.ts`): the check's reason and
 * words.
 */
function findingOf(key: string, provider: ProviderRuntime, found: ConsumerEvent, at: Date): Finding | undefined {
  if (found.type !== 'NOT_HELD') return undefined;
  const { contestedWindowMs, verifyEveryMs } = provider.config.timing;
  return {
    key,
    reason: found.reason,
    words: findingWords(found.reason, found.detail, found.node),
    at: at.getTime(),
    windowMs: contestedWindowMs,
    waveMs: lossWaveMs(verifyEveryMs),
  };
}

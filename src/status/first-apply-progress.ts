/**
 * How far a provider's first applies have come, said as a person expects of long work: how many
 * of its declared consumers are applied and held, at what rate, and about how long is left. A
 * consumer counts once it was held (or asked) at least once: its provider's asked-at set in the
 * queue's Redis, counted without reading a record (`NoteReads.askedCounts`). The rate is taken
 * over the samples of the last {@link PACE_WINDOW_MS}, so that a pause or a burst shows soon.
 */

/** A provider's first applies as counted now. */
export interface FirstApplyCount {
  /** Declared consumers applied and held (or asked) at least once. */
  applied: number;
  /** Consumers its contributions declare. */
  declared: number;
}

/** A provider's first applies, with their pace. */
export interface FirstApplyProgress extends FirstApplyCount {
  /** Consumers applied a second over the last samples; null until two samples some time apart. */
  perSecond: number | null;
  /** About how long until every declared consumer is applied (s); null while the rate is unknown or nil. */
  leftS: number | null;
}

/** The rate is taken over this much of the latest samples (ms). */
export const PACE_WINDOW_MS = 30_000;

/** Two samples closer than this (ms) give no rate: too little time to tell one. */
const SHORTEST_SPAN_MS = 500;

/** The count of `asked` consumers of `declared` (more asked than declared: a removal not noted yet). */
export function firstApplyCount(asked: number, declared: number): FirstApplyCount {
  return { applied: Math.min(asked, declared), declared };
}

/** Whether first applies are outstanding: fewer applied than declared. */
export function outstanding(count: FirstApplyCount): boolean {
  return count.applied < count.declared;
}

/** The samples of each provider's count, kept for {@link PACE_WINDOW_MS}: a few dozen numbers each. */
export class FirstApplyPace {
  private readonly samples = new Map<string, Array<{ at: number; applied: number }>>();

  /** Notes `count` as seen at `at` (ms) and answers it with its pace. */
  observe(provider: string, count: FirstApplyCount, at: number): FirstApplyProgress {
    const kept = (this.samples.get(provider) ?? []).filter((s) => s.at >= at - PACE_WINDOW_MS && s.at <= at);
    // a count lower than before (consumers removed, the queue's Redis forgotten) starts the pace again
    const last = kept.at(-1);
    const samples = last && count.applied < last.applied ? [] : kept;
    if (samples.at(-1)?.at !== at) samples.push({ at, applied: count.applied });
    this.samples.set(provider, samples);
    const first = samples[0]!;
    const spanMs = at - first.at;
    const perSecond = spanMs >= SHORTEST_SPAN_MS ? ((count.applied - first.applied) * 1000) / spanMs : null;
    const left = count.declared - count.applied;
    const leftS = perSecond !== null && perSecond > 0 ? Math.ceil(left / perSecond) : left === 0 ? 0 : null;
    return { ...count, perSecond, leftS };
  }

  /** Forgets a provider's samples (its first applies ended). */
  forget(provider: string): void {
    this.samples.delete(provider);
  }
}

const number = (n: number) => n.toLocaleString('en-US');

/** `2.5 s`, `4 min 10 s`, `1 h 5 min`. */
function timeLeft(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(s / 3600)} h${Math.round((s % 3600) / 60) ? ` ${Math.round((s % 3600) / 60)} min` : ''}`;
}

/** `5,120 of 20,000 declared consumers applied (25.6 %), 410/s, about 37 s left`. */
export function progressWords(p: FirstApplyProgress): string {
  const share = p.declared > 0 ? ` (${((p.applied * 100) / p.declared).toFixed(1)} %)` : '';
  const rate = p.perSecond === null ? '' : `, ${number(Math.round(p.perSecond))}/s`;
  const left =
    p.leftS !== null ? `, about ${timeLeft(p.leftS)} left` : p.perSecond === 0 ? ', none applied lately' : '';
  return `${number(p.applied)} of ${number(p.declared)} declared consumers applied${share}${rate}${left}`;
}

/**
 * The status within its budget, whatever does not answer: `holdfast status`, `/status`,
 * `/healthz` and the status page all read it here. When the record store or the queue's Redis
 * does not answer in time, the report is red and names it, with how long it has not answered;
 * a worker's note of a store outage (kept in the queue's Redis by its store watch) is used when
 * present. One report is read at a time per listing: requests meanwhile share it, so scrapers
 * hitting a frozen server pile nothing up behind it.
 */
import type { StoreOutageSignal } from '../queue/coordination.js';
import { ShardedCoordination } from '../queue/sharded-coordination.js';
import { formatDuration } from '../config/duration.js';
import { storeReason } from '../store/store-retry.js';
import { DependencyWatch, type Dependency } from './dependency-watch.js';
import { within } from './read-within.js';
import type { ShardWaits } from './shard-outages.js';
import {
  statusReport,
  unreachableReport,
  type StatusOptions,
  type StatusReport,
  type StatusSources,
} from './status-report.js';
import { inWords } from './status-words.js';
import { FirstApplyPace } from './first-apply-progress.js';

export { inWords } from './status-words.js';

/** The one budget of a status answer, every connection and read included (ms). */
export const STATUS_BUDGET_MS = 4_000;
/** A finished report is shared by requests this close after it (ms); an unfinished one always is. */
const REUSE_MS = 250;
/**
 * Of the budget, what is kept after the last read of a queue shard, to merge and answer (ms, at most a tenth of it).
 */
const AFTER_SHARDS_MS = 250;

/**
 * How long a status read of `budgetMs` from `start` waits for one queue shard: half the budget
 * for each read (a shard's master that died keeps it that long, and the others' later reads still
 * have the rest), none past the budget's end.
 */
export function shardWaits(start: number, budgetMs: number): ShardWaits {
  return { perReadMs: budgetMs / 2, until: start + budgetMs - Math.min(AFTER_SHARDS_MS, budgetMs / 10) };
}

/** Where the status's dependencies are, for its lines (URLs without credentials). */
export interface StatusWhere {
  store: string;
  queue: string;
}

export interface BoundedSources extends StatusSources {
  coordination: StatusSources['coordination'] & { readonly signals: Pick<StoreOutageSignal, 'storeOutage'> };
}

const inSeconds = (ms: number) => formatDuration(Math.max(1000, Math.round(ms / 1000) * 1000));

export class BoundedStatus {
  private readonly sources: BoundedSources;
  /**
   * A sharded queue's coordination, read unwatched: its reads are guarded shard by shard instead (`shard-outages.ts`).
   */
  private readonly sharded: ShardedCoordination | null;
  private readonly watch: DependencyWatch;
  private readonly budgetMs: number;
  /** The pace of each provider's first applies, over the reports read. */
  private readonly pace = new FirstApplyPace();
  private shared: Partial<Record<'all' | 'unserved', { report: Promise<StatusReport>; settledAt: number | null }>> = {};

  constructor(
    sources: BoundedSources,
    private readonly where: StatusWhere,
    options: { watch?: DependencyWatch; budgetMs?: number } = {},
  ) {
    this.watch = options.watch ?? new DependencyWatch();
    this.budgetMs = options.budgetMs ?? STATUS_BUDGET_MS;
    this.sources = {
      ...sources,
      store: this.watch.watched('store', sources.store),
      coordination: this.watchedQueue(sources.coordination),
    };
    this.sharded = sources.coordination instanceof ShardedCoordination ? sources.coordination : null;
  }

  /**
   * The report, within the budget: red naming who did not answer when it cannot be read in time,
   * and red at once when a worker noted that the store does not answer.
   */
  async read(options: StatusOptions = {}): Promise<StatusReport> {
    const start = Date.now();
    const until = start + this.budgetMs;
    const waits = shardWaits(start, this.budgetMs);
    const report = this.report(options.all === true, waits);
    // the note is in the home shard: on a sharded queue, waited for as long as one shard's read
    const note = this.sharded
      ? within(this.sources.coordination.signals.storeOutage(), start + waits.perReadMs - Date.now()).then((o) =>
          o.kind === 'answered' ? o.value : null,
        )
      : this.sources.coordination.signals.storeOutage();
    const never = new Promise<never>(() => undefined);
    const noted = note.then(
      (outage) => (outage ? unreachableReport(new Date(), [this.storeDown(outage)]) : never),
      () => never,
    );
    // a report, or its failure, is given once the note is read too: the note says more than a refused connection
    const afterNote = <T>(settle: () => T) => note.then(settle, settle);
    const reported = report.then(
      (r) => afterNote(() => r),
      (error: unknown) =>
        afterNote((): never => {
          throw error;
        }),
    );
    const read = await within(Promise.race([noted, reported]), until - Date.now());
    if (read.kind === 'answered') return this.paced(read.value);
    const reasons = this.reasons();
    if (reasons.length > 0) return unreachableReport(new Date(), reasons);
    if (read.kind === 'failed') throw read.error;
    return unreachableReport(new Date(), [`the status could not be read within ${inSeconds(this.budgetMs)}`]);
  }

  /** The report with the pace of its providers' first applies, from the reports read before it. */
  private paced(report: StatusReport): StatusReport {
    const at = Date.parse(report.at);
    const providers = report.providers.map((p) => {
      if (!p.firstApplies) {
        this.pace.forget(p.provider);
        return p;
      }
      return { ...p, firstApplies: this.pace.observe(p.provider, p.firstApplies, at) };
    });
    return { ...report, providers };
  }

  /** The queue's reads, each part's watched. */
  private watchedQueue(coordination: BoundedSources['coordination']): BoundedSources['coordination'] {
    const watched = <T extends object>(part: T): T => this.watch.watched('queue', part);
    const { locks, signals, notes, contests } = coordination;
    return { locks: watched(locks), signals: watched(signals), notes: watched(notes), contests: watched(contests) };
  }

  /** The report being read for this listing (shared), or a new one. */
  private report(all: boolean, waits: ShardWaits): Promise<StatusReport> {
    const which = all ? 'all' : 'unserved';
    const hit = this.shared[which];
    if (hit && (hit.settledAt === null || Date.now() - hit.settledAt < REUSE_MS)) return hit.report;
    const sources = this.sharded ? { ...this.sources, coordination: this.sharded } : this.sources;
    const entry = {
      report: statusReport(sources, new Date(), { all, shardWaits: waits }),
      settledAt: null as number | null,
    };
    this.shared[which] = entry;
    entry.report.then(
      () => (entry.settledAt = Date.now()),
      () => {
        if (this.shared[which] === entry) delete this.shared[which];
      },
    );
    return entry.report;
  }

  private storeDown(outage: { since: string; reason: string }): string {
    const ms = Date.now() - Date.parse(outage.since);
    return `record store ${this.where.store} does not answer since ${outage.since}, ${inSeconds(ms)} ago (${outage.reason}): only routine checks run, and heals of what the records say was applied, until it does`;
  }

  /**
   * One line for each dependency that keeps a read waiting or failed it: not answering for how long, or why it is
   * unreachable.
   */
  private reasons(): string[] {
    const names: Record<Dependency, string> = {
      store: `record store ${this.where.store}`,
      queue: `queue Redis ${this.where.queue}`,
    };
    return (['store', 'queue'] as const).flatMap((dependency) => {
      const since = this.watch.waitingSince(dependency);
      const error = this.watch.lastError(dependency);
      const reason = error === undefined ? undefined : dependency === 'store' ? storeReason(error) : error;
      if (since === null && reason === undefined) return [];
      const silentMs = since !== null ? Date.now() - since : this.watch.lastWaitMs(dependency);
      if (reason !== undefined && !/timed out|timeout/i.test(reason))
        return [`${names[dependency]} unreachable: ${inWords(reason)}`];
      return [
        `${names[dependency]} has not answered for ${inSeconds(silentMs ?? this.budgetMs)}${reason ? ` (${reason})` : ''}`,
      ];
    });
  }
}

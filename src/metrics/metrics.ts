/**
 * holdfast's Prometheus metrics (prom-client), counted in process as work happens: checks by
 * kind and outcome, applies, heal time, brake engagements, blocked secrets, could-not-ask,
 * lateness of due checks. What the alert rules (deploy/prometheus/) need besides is read when
 * scraped (`scrape-gauges.ts`): consumers by state and the unserved by name, the queue's
 * depth, last checks, orphans, removals held back, the store's and the queue's answer.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { HistoryEntry } from '../store/consumer-record.js';
import { ScrapeGauges } from './scrape-gauges.js';
import type { ScrapeSources } from './scrape-sources.js';

export type { ScrapeSources } from './scrape-sources.js';

/** How long a scrape waits for its sources when the scraper does not say (Prometheus sends its scrape timeout). */
export const SCRAPE_DEADLINE_MS = 3000;

/**
 * The deadline for a scrape's sources: a quarter second inside the timeout the scraper sends
 * (Prometheus's `X-Prometheus-Scrape-Timeout-Seconds`), at most {@link SCRAPE_DEADLINE_MS}.
 */
export function scrapeDeadlineMs(scrapeTimeoutHeader: string | string[] | undefined): number {
  const seconds = Number(Array.isArray(scrapeTimeoutHeader) ? scrapeTimeoutHeader[0] : scrapeTimeoutHeader);
  if (!Number.isFinite(seconds) || seconds <= 0) return SCRAPE_DEADLINE_MS;
  return Math.max(100, Math.min(SCRAPE_DEADLINE_MS, seconds * 1000 - 250));
}

/** What a worker tells the metrics; every method is cheap and synchronous (no I/O on the check path). */
export interface WorkObserver {
  /** A check ended: `deep` when rules were compared; outcome as the record keeps it. */
  checked(provider: string, deep: boolean, outcome: string): void;
  /** An apply ended; `reapply` after a loss. */
  applied(provider: string, reapply: boolean, ok: boolean): void;
  /** A consumer's state changed; `history` is what its record held before. */
  transition(provider: string, transition: HistoryEntry, history: readonly HistoryEntry[]): void;
  /** A due check began `ms` after it was due. */
  lateness(provider: string, ms: number): void;
  /** A job holdfast did not write was dropped (or its ticket not used), for `reason`. */
  jobRejected(reason: string): void;
}

/** The time from leaving `held` (the loss) to `held` again, when the consumer went through `lost`. */
export function healTimeMs(transition: HistoryEntry, history: readonly HistoryEntry[]): number | undefined {
  if (transition.to !== 'held') return undefined;
  let sawLost = transition.from === 'lost';
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i]!;
    if (entry.to === 'lost' || entry.from === 'lost') sawLost = true;
    if (entry.from === 'held') return sawLost ? transition.at.getTime() - entry.at.getTime() : undefined;
    if (entry.to === 'held') return undefined;
  }
  return undefined;
}

export class Metrics implements WorkObserver {
  readonly registry = new Registry();
  private readonly checks: Counter<'provider' | 'kind' | 'outcome'>;
  private readonly applies: Counter<'provider' | 'kind' | 'outcome'>;
  private readonly heal: Histogram<'provider'>;
  private readonly brakes: Counter<'provider'>;
  private readonly blocked: Counter<'provider'>;
  private readonly couldNotAsk: Counter<'provider'>;
  private readonly late: Histogram<'provider'>;
  private readonly batches: Histogram<'provider' | 'call'>;
  private readonly rejected: Counter<'reason'>;
  private readonly unexpected: Counter<'kind'>;
  private readonly controlsUndone: Counter<'queue' | 'control'>;
  private readonly unsealed: Counter<'kind'>;
  private readonly failed: Counter<'provider' | 'to'>;
  private readonly suspectsAskedIn: Histogram<'provider' | 'why'>;
  private readonly gauges: ScrapeGauges;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'holdfast_process_' });
    this.checks = new Counter({
      name: 'holdfast_checks_total',
      help: 'Checks by provider, kind (light: password only; deep: rules compared) and outcome',
      labelNames: ['provider', 'kind', 'outcome'],
      registers,
    });
    this.applies = new Counter({
      name: 'holdfast_applies_total',
      help: 'Applies by provider, kind (first, reapply after a loss) and outcome',
      labelNames: ['provider', 'kind', 'outcome'],
      registers,
    });
    this.heal = new Histogram({
      name: 'holdfast_heal_seconds',
      help: 'Time from a consumer leaving held (found lost) to held again',
      labelNames: ['provider'],
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
      registers,
    });
    this.brakes = new Counter({
      name: 'holdfast_brake_engagements_total',
      help: 'Times a consumer lost again and again was braked (re-applies spaced out)',
      labelNames: ['provider'],
      registers,
    });
    this.blocked = new Counter({
      name: 'holdfast_blocked_secrets_total',
      help: 'Times a consumer was blocked: its grant secret could not be read',
      labelNames: ['provider'],
      registers,
    });
    this.couldNotAsk = new Counter({
      name: 'holdfast_could_not_ask_total',
      help: 'Checks that could not ask the backend',
      labelNames: ['provider'],
      registers,
    });
    this.late = new Histogram({
      name: 'holdfast_check_lateness_seconds',
      help: 'How late due checks began',
      labelNames: ['provider'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers,
    });
    this.batches = new Histogram({
      name: 'holdfast_backend_batch_size',
      help: 'Consumers per batch of applies (create) or deep checks (holds) sent to a provider at once (Redis: one pipeline per node)',
      labelNames: ['provider', 'call'],
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers,
    });
    this.rejected = new Counter({
      name: 'holdfast_jobs_rejected_total',
      help: 'Jobs holdfast did not write, by reason: a desired spec not sealed (dropped), a ticket not sealed (not used), a command no command sends (dropped)',
      labelNames: ['reason'],
      registers,
    });
    this.unexpected = new Counter({
      name: 'holdfast_unexpected_errors_total',
      help: 'Errors no one caught that the process survived (a backend connection lost where nothing listened), by kind: uncaught-exception, unhandled-rejection',
      labelNames: ['kind'],
      registers,
    });
    this.controlsUndone = new Counter({
      name: 'holdfast_queue_controls_undone_total',
      help: "Pauses, global rate limits and global concurrencies found set on holdfast's queues from outside (Bull Board, a writer of the queue's Redis) and undone, by queue and control: paused, rateLimit, concurrency",
      labelNames: ['queue', 'control'],
      registers,
    });
    this.unsealed = new Counter({
      name: 'holdfast_unsealed_notes_total',
      help: "Values in the queue's Redis that holdfast did not write (their seal fails), read as absent, by kind: state, brief, memo (a consumer's), removals (a confirmation)",
      labelNames: ['kind'],
      registers,
    });
    this.failed = new Counter({
      name: 'holdfast_failed_logins_total',
      help: "Failed logins the backend recorded (Redis's ACL LOG, reason auth), by provider and to whom they count: consumer (a consumer's login: its app fails to log in), provider (a login no consumer claims); counted by the process that runs the desired-state sync",
      labelNames: ['provider', 'to'],
      registers,
    });
    this.suspectsAskedIn = new Histogram({
      name: 'holdfast_suspect_asked_duration_seconds',
      help: "Time from a node event of a provider's backend (why: new-run-id, new-system-id, promoted, answers-again, joined, loss-wave) to all the consumers it made suspect asked again; observed once per event, by the worker that noted it",
      labelNames: ['provider', 'why'],
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300],
      registers,
    });
    this.gauges = new ScrapeGauges(this.registry);
  }

  /** All the consumers a node event of `provider` made suspect were asked, `seconds` after it was seen. */
  suspectsAsked(provider: string, why: string, seconds: number): void {
    this.suspectsAskedIn.observe({ provider, why }, Math.max(0, seconds));
  }

  /** Failed logins read from a provider's backend: `attributed` to its consumers, the rest to the provider only. */
  failedLogins(provider: string, attributed: number, unattributed: number): void {
    // both series exist once read, so that an alert's increase() sees the first failures
    this.failed.inc({ provider, to: 'consumer' }, attributed);
    this.failed.inc({ provider, to: 'provider' }, unattributed);
  }

  /** A control set on a queue from outside was undone (see queue/queue-controls.ts). */
  queueControlUndone(queue: string, control: string): void {
    this.controlsUndone.inc({ queue, control });
  }

  /** An error no one caught was survived (see cli/connection-fault-guard.ts). */
  unexpectedError(kind: string): void {
    this.unexpected.inc({ kind });
  }

  /** Where the scraped gauges read from (set once the engine runs). */
  scrapeFrom(sources: ScrapeSources): void {
    this.gauges.readFrom(sources);
  }

  checked(provider: string, deep: boolean, outcome: string): void {
    this.checks.inc({ provider, kind: deep ? 'deep' : 'light', outcome });
    if (outcome === 'could-not-ask') this.couldNotAsk.inc({ provider });
  }

  /** A batch of `size` applies or deep checks was sent to `provider`. */
  batched(provider: string, call: 'create' | 'holds', size: number): void {
    this.batches.observe({ provider, call }, size);
  }

  applied(provider: string, reapply: boolean, ok: boolean): void {
    this.applies.inc({ provider, kind: reapply ? 'reapply' : 'first', outcome: ok ? 'applied' : 'failed' });
  }

  transition(provider: string, transition: HistoryEntry, history: readonly HistoryEntry[]): void {
    if (transition.to === 'backoff') this.brakes.inc({ provider });
    if (transition.to === 'blocked') this.blocked.inc({ provider });
    const heal = healTimeMs(transition, history);
    if (heal !== undefined) this.heal.observe({ provider }, heal / 1000);
  }

  lateness(provider: string, ms: number): void {
    this.late.observe({ provider }, Math.max(0, ms) / 1000);
  }

  jobRejected(reason: string): void {
    this.rejected.inc({ reason });
  }

  /** A value in the queue's Redis that holdfast did not write was read as absent (see queue/note-seal.ts). */
  unsealedNote(kind: string): void {
    this.unsealed.inc({ kind });
  }

  /** The metrics as Prometheus reads them; the scraped sources are given `deadlineMs` to answer. */
  async text(deadlineMs = SCRAPE_DEADLINE_MS): Promise<string> {
    await this.gauges.refresh(deadlineMs);
    return this.registry.metrics();
  }
}

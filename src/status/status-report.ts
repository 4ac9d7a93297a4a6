/**
 * What `holdfast status` reports: every consumer's state, since when, its last and next
 * check, its brake count and last reason; every provider's contributions and pause. It is
 * never green over an unserved consumer.
 */
import type { ConsumerContext, ConsumerStateName } from '../../machines/consumer-machine.js';
import type { Pause, ProviderGate } from '../queue/provider-gate.js';
import type { LastCheck } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';

export interface ConsumerStatus {
  consumer: string;
  provider: string;
  login: string;
  state: ConsumerStateName;
  /** The state in words, e.g. `could not ask`. */
  label: string;
  healthy: boolean;
  since: string;
  lastCheck: { at: string; outcome: LastCheck['outcome']; detail: string | null } | null;
  /** When the next step (check, re-apply, retry) is due. */
  nextAt: string | null;
  brakeCount: number;
  reason: string | null;
}

export interface ProviderHealth {
  provider: string;
  healthy: boolean;
  consumers: number;
  contributionsError: string | null;
  paused: { since: string; reason: string } | null;
}

export interface StatusReport {
  at: string;
  healthy: boolean;
  providers: ProviderHealth[];
  consumers: ConsumerStatus[];
}

export const STATE_LABELS: Record<ConsumerStateName, string> = {
  pending: 'pending',
  applying: 'applying',
  held: 'held',
  verifying: 'verifying',
  lost: 'lost, applying again',
  backoff: 'not held, braking',
  retrying: 'apply failed, retrying',
  couldNotAsk: 'could not ask',
  waitingForSecret: 'waiting for its grant secret',
  blocked: 'blocked: grant secret unreadable',
  rejected: 'rejected by policy',
  removing: 'removing',
  removeRetrying: 'remove failed, retrying',
  removed: 'removed',
};

/** States that are not an unserved consumer. */
const HEALTHY: ReadonlySet<ConsumerStateName> = new Set(['held', 'removing', 'removed']);

export async function statusReport(store: ConsumerStore, gate: ProviderGate | undefined, providerNames: string[], now: Date): Promise<StatusReport> {
  const [records, statuses] = await Promise.all([store.list(), store.providerStatuses()]);
  const names = [...new Set([...providerNames, ...statuses.map((s) => s._id), ...records.map((r) => r.provider)])].sort();
  const paused = gate ? await gate.paused(names) : new Map<string, Pause>();

  const consumers = records.map((record): ConsumerStatus => {
    const context = (record.snapshot as { context?: ConsumerContext }).context;
    return {
      consumer: record._id,
      provider: record.provider,
      login: record.desired.login,
      state: record.state,
      label: STATE_LABELS[record.state],
      healthy: HEALTHY.has(record.state),
      since: record.stateSince.toISOString(),
      lastCheck: record.lastCheck ? { ...record.lastCheck, at: record.lastCheck.at.toISOString() } : null,
      nextAt: record.timer?.dueAt.toISOString() ?? null,
      brakeCount: context?.brakeCount ?? 0,
      reason: context?.reason ?? null,
    };
  });

  const providers = names.map((name): ProviderHealth => {
    const status = statuses.find((s) => s._id === name);
    const pause = paused.get(name) ?? null;
    const contributionsError = status?.contributionsError ?? null;
    return {
      provider: name,
      healthy: !pause && !contributionsError,
      consumers: consumers.filter((c) => c.provider === name).length,
      contributionsError,
      paused: pause,
    };
  });

  return {
    at: now.toISOString(),
    healthy: consumers.every((c) => c.healthy) && providers.every((p) => p.healthy),
    providers,
    consumers,
  };
}

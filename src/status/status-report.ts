/**
 * What `holdfast status` reports: every consumer's state, since when, its last and next
 * check, its brake count and last reason; every provider's contributions and pause. It is
 * never green over an unserved consumer.
 */
import { describeConsumer } from '../../machines/consumer-health.js';
import { readPersisted } from '../../machines/machine-step.js';
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import { verifyDelay } from '../../machines/delays.js';
import type { ProviderConfig } from '../config/config.js';
import type { CheckMemo, Coordination, OrphanReport, Pause } from '../queue/coordination.js';
import type { ConsumerRecord, LastCheck } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';

export interface ConsumerStatus {
  consumer: string;
  provider: string;
  login: string;
  /** The machine's state; `unreadable` for a record this holdfast cannot read (a newer machine version). */
  state: ConsumerStateName | 'unreadable';
  /** The state in words, e.g. `could not ask`. */
  label: string;
  healthy: boolean;
  since: string;
  lastCheck: { at: string; outcome: LastCheck['outcome']; detail: string | null } | null;
  /** When the next step (check, re-apply, retry) is due. */
  nextAt: string | null;
  brakeCount: number;
  reason: string | null;
  /** A newer spec the policy refused (file, line and field), while the last accepted one is kept; null when none. */
  refused: string | null;
}

export interface ProviderHealth {
  provider: string;
  healthy: boolean;
  consumers: number;
  contributionsError: string | null;
  paused: { since: string; reason: string } | null;
  /** Other problems of the provider, one sentence each with what to do (e.g. removals held back); any makes it unhealthy. */
  problems: string[];
}

export interface StatusReport {
  at: string;
  healthy: boolean;
  providers: ProviderHealth[];
  consumers: ConsumerStatus[];
}

/** Where the status reads from: the records, and (when reachable) the queue's Redis. */
export interface StatusSources {
  store: Pick<ConsumerStore, 'list' | 'providerStatuses'>;
  /** Where pauses and what checks learned are read (absent: the queue's Redis is not asked). */
  coordination?: Pick<Coordination, 'checkMemos' | 'pauses'> & Partial<Pick<Coordination, 'orphans'>>;
  providers: readonly Pick<ProviderConfig, 'name' | 'timing'>[];
}

/** The last check: the one the queue's Redis remembers when it is newer than the record's. */
function lastCheckOf(record: ConsumerRecord, memo: CheckMemo | undefined): LastCheck | null {
  if (memo && (!record.lastCheck || memo.at > record.lastCheck.at.getTime())) return { at: new Date(memo.at), outcome: memo.outcome, detail: memo.detail };
  return record.lastCheck;
}

export async function statusReport(sources: StatusSources, now: Date): Promise<StatusReport> {
  const { store, coordination } = sources;
  const [records, statuses] = await Promise.all([store.list(), store.providerStatuses()]);
  const names = [...new Set([...sources.providers.map((p) => p.name), ...statuses.map((s) => s._id), ...records.map((r) => r.provider)])].sort();
  const paused = coordination ? await coordination.pauses(names) : new Map<string, Pause>();
  const orphans = coordination?.orphans ? await coordination.orphans(names) : new Map<string, OrphanReport>();
  const memos = coordination ? await coordination.checkMemos(records.map((r) => r._id)) : new Map<string, CheckMemo>();
  const timing = new Map(sources.providers.map((p) => [p.name, p.timing]));

  const consumers = records.map((record): ConsumerStatus => {
    const read = readPersisted(record.machine.version, record.machine);
    const described = 'consumer' in read ? describeConsumer(read.consumer) : { state: 'unreadable' as const, label: `unreadable: ${read.problem}`, healthy: false, brakeCount: 0, reason: read.problem };
    const lastCheck = lastCheckOf(record, memos.get(record._id));
    const providerTiming = timing.get(record.provider);
    // a routine check reschedules itself without writing: after the record's due time, the next is one wait after the last check
    const due = record.timer?.dueAt ?? null;
    const next = due && lastCheck && due <= lastCheck.at && providerTiming ? new Date(lastCheck.at.getTime() + verifyDelay(record._id, providerTiming)) : due;
    const refused = record.refused ? `new spec refused by policy, the last accepted one kept: ${record.refused.problems.join('; ')}` : null;
    return {
      consumer: record._id,
      provider: record.provider,
      login: record.desired.login,
      state: described.state,
      label: refused ? `${described.label}; new spec refused` : described.label,
      healthy: described.healthy && !refused,
      since: record.stateSince.toISOString(),
      lastCheck: lastCheck ? { ...lastCheck, at: lastCheck.at.toISOString() } : null,
      nextAt: next?.toISOString() ?? null,
      brakeCount: described.brakeCount,
      reason: refused ?? described.reason,
      refused,
    };
  });

  const providers = names.map((name): ProviderHealth => {
    const status = statuses.find((s) => s._id === name);
    const pause = paused.get(name) ?? null;
    const contributionsError = status?.contributionsError ?? null;
    const problems: string[] = [];
    const held = status?.heldRemovals;
    if (held) {
      problems.push(
        `removals held back since ${held.since.toISOString()}: ${held.removals} would be removed (of ${held.of}) by ${held.file}, e.g. ${held.sample.join(', ')}; ` +
          `if that is intended: holdfast confirm-removals ${name}; otherwise restore the file`,
      );
    }
    const orphaned = orphans.get(name);
    if (orphaned && orphaned.logins.length > 0) {
      problems.push(
        `${orphaned.logins.length} login(s) under "${orphaned.prefix}" that no consumer claims (orphans, as of ${orphaned.at}): ${orphaned.logins.slice(0, 20).join(', ')}${orphaned.logins.length > 20 ? ', …' : ''}; ` +
          'declare them, remove them by hand, or set orphans.remove',
      );
    }
    return {
      provider: name,
      healthy: !pause && !contributionsError && problems.length === 0,
      problems,
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

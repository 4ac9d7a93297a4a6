/**
 * What `holdfast status`, `/status` and `/healthz` report: per provider, its consumers counted
 * by state and every problem in words; every consumer that is not served (every consumer with
 * `all`), with its state, since when, its last and next check, its brake count and reason.
 *
 * It is never green over something unserved: a declared consumer without a record, a
 * contributions file never read, checks that stopped running, a provider that cannot be asked,
 * a rejected consumer each make it red, with one line a person understands.
 *
 * It reads no record: the consumers in brief, what their checks learned and the providers'
 * pauses come from the queue's Redis, and the providers' statuses (one small document each)
 * from the store.
 *
 * On a sharded queue it stands on the shards that answered (`shard-outages.ts`): a shard that
 * fails or does not answer in time is named once, and its consumers' absence is not taken for
 * forgotten or never applied.
 */
import { STATE_MEANINGS } from '../../machines/consumer-health.js';
import { REMOVING_STATES, type ConsumerStateName } from '../../machines/consumer-machine.js';
import { verifyDelay } from '../../machines/delays.js';
import type { AdapterKind } from '../adapters/adapter.js';
import type { ProviderConfig } from '../config/config.js';
import { deepCheckIntervalMs } from '../config/deep-check-interval.js';
import { shortChange } from '../desired/desired-change.js';
import { formatDuration } from '../config/duration.js';
import { nodeEventWords } from '../adapters/incarnation-words.js';
import type { CheckMemo, NodesNote, OrphanReport, Pause, StatusReads, Suspects } from '../queue/coordination.js';
import { briefRefused, briefState, type ConsumerBrief } from '../queue/consumer-brief.js';
import type { QueuedChecks } from '../schedule/queued-checks.js';
import { controlLine, type QueueControlsRead } from '../queue/queue-controls.js';
import type { LastCheck } from '../store/consumer-record.js';
import { providerOf } from '../store/consumer-key.js';
import type { ConsumerStore, ProviderStatus } from '../store/consumer-store.js';
import { CONTESTED_LISTED, contestedOf, type ContestedStatus } from './contested-status.js';
import { failedLoginsOf, type FailedLoginsStatus } from './failed-logins-status.js';
import { oldConnectionsOf, type OldConnectionsReads, type OldConnectionsStatus } from './old-connections-status.js';
import { firstApplyCount, outstanding, type FirstApplyProgress } from './first-apply-progress.js';
import {
  readsForReport,
  unreadableShardLine,
  type ShardOutages,
  type ShardWaits,
  type UnreadableShard,
} from './shard-outages.js';

export interface ConsumerStatus {
  consumer: string;
  provider: string;
  login: string;
  /** The machine's state; `unreadable` for a record this holdfast cannot read (a newer machine version). */
  state: ConsumerBrief['state'];
  /** The state in words, e.g. `could not ask`. */
  label: string;
  /** False when the consumer is (or may be) unserved. */
  healthy: boolean;
  since: string;
  lastCheck: { at: string; outcome: LastCheck['outcome']; detail: string | null } | null;
  /** When the next step (check, re-apply, retry) is due. */
  nextAt: string | null;
  brakeCount: number;
  reason: string | null;
  /** Why a consumer whose state is healthy is not served after all (e.g. not asked for too long). */
  problem: string | null;
  /** A newer spec the policy refused (file, line and field), while the last accepted one is kept; null when none. */
  refused: string | null;
}

export interface ProviderHealth {
  provider: string;
  healthy: boolean;
  /** Consumers with a record. */
  consumers: number;
  /** Consumers the contributions declared at their last good read (null: never read). */
  declared: number | null;
  /** Consumers by state. */
  states: Record<string, number>;
  /**
   * While fewer declared consumers are applied than declared: how many are, and at what pace (the pace where the
   * status is read again and again, as the status page is; null otherwise). Null when none is outstanding.
   */
  firstApplies: FirstApplyProgress | null;
  contributionsError: string | null;
  paused: { since: string; reason: string } | null;
  /** When any of its consumers was last checked. */
  lastCheckAt: string | null;
  /** Consumers whose last check could not ask the backend. */
  couldNotAsk: number;
  /**
   * Its consumers made suspect by a node event (a node restarted, re-initialised, promoted, answering again) and not
   * asked since, with that event; null when none is: red until all are asked.
   */
  suspects: Suspects | null;
  /**
   * How often each consumer is checked deeply now (ms): its `deepCheckBudget` shared by `consumers`; null when not
   * configured here.
   */
  deepCheckEveryMs: number | null;
  /**
   * A backend of several nodes: each node as a worker last saw it (empty: one node, or none noted
   * lately), with how many consumers it lacks as that worker's checks and applies found them.
   */
  nodes: Array<{ address: string; role: string; answers: boolean; missing: number }>;
  /** Why it is not served, one line a person understands each; empty when it is. */
  problems: string[];
  /**
   * Its contested consumers (held, but changed outside holdfast again and again): counted, the first listed; not red.
   */
  contested: { count: number; consumers: ContestedStatus[] };
  /**
   * The consumer's side: its consumers turned away (held, their app failing to log in) and the failed logins no consumer
   * claims, as its backend's log was last read; null where that log is not read. Not red.
   */
  failedLogins?: FailedLoginsStatus | null;
  /** Its consumers with connections from before their rotation (the old password's clients): counted, the most listed; not red. */
  oldConnections?: { count: number; consumers: OldConnectionsStatus[] };
}

export type { UnreadableShard } from './shard-outages.js';

export interface StatusReport {
  at: string;
  healthy: boolean;
  /** Problems beyond any one provider (e.g. the record store cannot be reached, a queue shard cannot be read). */
  problems: string[];
  /**
   * The queue shards that could not be read (their consumers are left out of the counts); empty when every one
   * answered.
   */
  unreadableShards: UnreadableShard[];
  providers: ProviderHealth[];
  /** Consumers with a record, and how many of them are not served. */
  total: number;
  unserved: number;
  /** Which consumers `consumers` lists. */
  listing: 'unserved' | 'all';
  consumers: ConsumerStatus[];
}

/** Where the status reads from. */
export interface StatusSources {
  store: Pick<ConsumerStore, 'providerStatuses'>;
  coordination: StatusReads;
  providers: ReadonlyArray<
    Pick<ProviderConfig, 'name' | 'timing'> & { adapter?: Pick<AdapterKind, 'deepCheckCostUs'> }
  >;
  /** Whether silent consumers' checks are still queued (a backlog), when the status can see the queue's jobs. */
  queued?: QueuedChecks;
  /** What stops or throttles the queues (a pause, a global rate limit or concurrency): red while any is set. */
  controls?: QueueControlsRead;
  /** The connections from before each consumer's rotation, as the old-connections watch last listed them. */
  oldConnections?: OldConnectionsReads;
}

export interface StatusOptions {
  /** List every consumer, not only the unserved. */
  all?: boolean;
  /**
   * On a sharded queue, how long a shard's read is waited for before the shard is named unreadable (none: only failures
   * name it).
   */
  shardWaits?: ShardWaits;
}

/** What is known of one provider, for the checks that find its problems. */
export interface ProviderFacts {
  name: string;
  configured: boolean;
  timing: Pick<ProviderConfig, 'timing'>['timing'] | undefined;
  status: ProviderStatus | undefined;
  pause: Pause | null;
  states: Record<string, number>;
  /** The latest sign of a worker asking about its consumers: a check ending, or a consumer becoming held. */
  lastCheckAt: number | null;
  couldNotAsk: number;
  /** Its consumers a node event made suspect, not asked since (absent: none). */
  suspects?: Suspects | undefined;
  /** Consumers that keep their accepted spec while a newer one is refused. */
  refused: number;
  /** Logins under the provider's orphan prefix that no consumer claims, as last listed. */
  orphans: OrphanReport | undefined;
  /** Its consumers whose state in the queue's Redis holdfast did not write (its seal fails): unknown. */
  unsealed?: readonly string[];
  /** Its backend's nodes as a worker last noted them (a backend of several nodes). */
  nodes?: NodesNote | undefined;
  now: number;
  /**
   * Queue shards whose consumers' states could not be read: none of the declared consumers then counts as without a
   * record.
   */
  uncountedShards?: number;
}

/**
 * One reason a provider is not served: what kind of reason it is (what the report decides on)
 * and its line (what the report shows, in `ProviderHealth.problems`).
 */
export interface ProviderProblem {
  kind: ProviderProblemKind;
  text: string;
}

export type ProviderProblemKind =
  | 'configuration'
  | 'contributions'
  | 'unrecorded'
  | 'paused'
  | 'nodeUnanswering'
  | 'nodeLacking'
  | 'couldNotAsk'
  /** A node event made consumers suspect, not all asked since. */
  | 'suspect'
  | 'rejected'
  | 'specRefused'
  | 'removalsHeld'
  | 'orphans'
  /** A consumer's state in the queue's Redis that holdfast did not write: unknown, never taken for held. */
  | 'unsealed'
  /** None of its held consumers is asked any more: no worker checks it. */
  | 'checksSilent'
  | 'unserved'
  /** Some of its held consumers are not asked while others are (they are listed). */
  | 'consumersSilent'
  | 'listedUnserved';

const problem = (kind: ProviderProblemKind, text: string): ProviderProblem => ({ kind, text });
/** `kind` lines, one for each of `texts`. */
const problemsOf = (kind: ProviderProblemKind, texts: readonly string[]): ProviderProblem[] =>
  texts.map((text) => problem(kind, text));

/** Consumers being removed no longer count as declared. */
const REMOVING: ReadonlySet<string> = REMOVING_STATES;
/** How many of a provider's consumers are in `state`, a state the chart has. */
const inState = (states: Record<string, number>, state: ConsumerStateName): number => states[state] ?? 0;
/** Silent consumers looked at per provider; when every one is silent, the provider's own line says so. */
const SILENT_LISTED = 10_000;

/** How long checks may be silent before the status says no worker runs: twice the interval plus the timeout. */
export function silenceLimitMs(timing: ProviderFacts['timing'] & object): number {
  return 2 * timing.verifyEveryMs + timing.checkTimeoutMs;
}

function ago(ms: number): string {
  return formatDuration(Math.max(1000, Math.round(ms / 1000) * 1000));
}

/**
 * Why a held consumer has not been asked for `ms`; `backlog`: its check is queued while its provider's others end (the
 * last `backlog.agoMs` ago).
 */
function silentFor(ms: number, backlog?: { agoMs: number }): string {
  if (backlog)
    return `not asked for ${ago(ms)}: its check is queued behind a backlog (workers are running: a check of its provider ended ${ago(backlog.agoMs)} ago)`;
  return `not asked for ${ago(ms)}: is a worker running?`;
}

/**
 * The silent consumers among `keys` whose checks wait behind a backlog: their jobs are queued
 * while checks of their provider keep ending (within the silence limit).
 */
async function behindBacklog(
  keys: readonly string[],
  sources: StatusSources,
  stateOf: Record<string, string>,
  lastCheckAt: ReadonlyMap<string, number>,
  now: number,
  outages: ShardOutages | null,
): Promise<Set<string>> {
  const timing = new Map(sources.providers.map((p) => [p.name, p.timing]));
  const working = keys.filter((key) => {
    const [last, t] = [lastCheckAt.get(providerOf(key)), timing.get(providerOf(key))];
    return last !== undefined && t !== undefined && now - last <= silenceLimitMs(t);
  });
  if (!sources.queued || working.length === 0) return new Set();
  const asked = sources.queued.queued(working.map((key) => [key, Number(stateOf[key]?.split(' ')[1])] as const));
  // on a sharded queue, a shard that does not answer leaves its consumers' backlog unknown, not the report unread
  const queued = outages ? await outages.settle(asked, () => working.map(() => false)) : await asked;
  return new Set(working.filter((_, i) => queued[i]));
}

/** A node of a backend of several that a worker cannot ask (one node: the pause and could-not-ask lines say it). */
function nodeLine(node: NodesNote['nodes'][number], now: number): string {
  const since =
    node.since !== undefined && Number.isFinite(Date.parse(node.since))
      ? ` since ${node.since} (${ago(now - Date.parse(node.since))} ago)`
      : '';
  return `node ${node.address} (${node.role}) cannot be asked${since}${node.why ? `: ${node.why}` : ''}; its consumers stay held on the nodes that answer`;
}

/**
 * A node of a backend of several that answers and lacks consumers: red (a replica restarted empty
 * is healed within a check, so it is red for moments; one where the apply fails stays red).
 */
function lackingLine(node: NodesNote['nodes'][number]): string {
  const n = node.missing ?? 0;
  return `node ${node.address} (${node.role}) lacks ${n} consumer${n === 1 ? '' : 's'}${node.missingWhy ? `: ${node.missingWhy}` : ''}`;
}

/**
 * The checks that find what keeps a provider from being served; each returns its problems. Add
 * one here (with its kind) to make the status red for a new reason.
 */
export const PROVIDER_CHECKS: ReadonlyArray<(facts: ProviderFacts) => ProviderProblem[]> = [
  ({ status, configured }) => {
    if (!configured)
      return [problem('configuration', 'not in this configuration: its records are left from an earlier one')];
    if (!status) return [problem('contributions', 'contributions never read: is `holdfast run` running?')];
    if (status.lastGoodAt === null)
      return [
        problem(
          'contributions',
          `contributions never read successfully: ${status.contributionsError ?? 'not read yet'}`,
        ),
      ];
    return status.contributionsError
      ? [problem('contributions', `contributions refused (last good state in force): ${status.contributionsError}`)]
      : [];
  },
  ({ status, states, uncountedShards, unsealed }) => {
    if (!status || status.lastGoodAt === null || (uncountedShards ?? 0) > 0) return [];
    const recorded = Object.entries(states).reduce((n, [state, count]) => (REMOVING.has(state) ? n : n + count), 0);
    // a consumer whose state fails its seal has its own line
    const missing = status.consumers - recorded - (unsealed?.length ?? 0);
    return missing > 0
      ? [
          problem(
            'unrecorded',
            `${missing} of ${status.consumers} declared consumers have no record yet: their first apply has not finished (is a worker running?)`,
          ),
        ]
      : [];
  },
  ({ pause, now }) =>
    pause
      ? [problem('paused', `cannot be asked: checks paused for ${ago(now - Date.parse(pause.since))}: ${pause.reason}`)]
      : [],
  ({ nodes, now }) =>
    nodes && nodes.nodes.length > 1
      ? problemsOf(
          'nodeUnanswering',
          nodes.nodes.filter((n) => !n.answering).map((n) => nodeLine(n, now)),
        )
      : [],
  ({ nodes }) =>
    nodes && nodes.nodes.length > 1
      ? problemsOf('nodeLacking', nodes.nodes.filter((n) => n.answering && (n.missing ?? 0) > 0).map(lackingLine))
      : [],
  ({ suspects }) => (suspects && suspects.count > 0 ? [problem('suspect', suspectLine(suspects))] : []),
  ({ couldNotAsk }) =>
    couldNotAsk > 0
      ? [problem('couldNotAsk', `cannot be asked about ${couldNotAsk} consumer${couldNotAsk === 1 ? '' : 's'}`)]
      : [],
  ({ states }) => {
    const rejected = inState(states, 'rejected');
    return rejected > 0
      ? [problem('rejected', `${rejected} consumer${rejected === 1 ? '' : 's'} rejected by policy`)]
      : [];
  },
  ({ refused }) =>
    refused > 0
      ? [
          problem(
            'specRefused',
            `${refused} consumer${refused === 1 ? '' : 's'} keep${refused === 1 ? 's' : ''} the last accepted spec: a newer one was refused by policy`,
          ),
        ]
      : [],
  ({ status, name }) => {
    const held = status?.heldRemovals;
    if (!held) return [];
    return [
      problem(
        'removalsHeld',
        `removals held back since ${held.since.toISOString()}: change ${shortChange(held.change)}, ${held.removals} would be removed (of ${held.of}) by ${held.file}, e.g. ${held.sample.join(', ')}; ` +
          `if that is intended: holdfast confirm-removals ${name} --change ${shortChange(held.change)}; otherwise restore the file`,
      ),
    ];
  },
  ({ orphans }) => {
    if (!orphans || orphans.logins.length === 0) return [];
    const some = `${orphans.logins.slice(0, 20).join(', ')}${orphans.logins.length > 20 ? ', …' : ''}`;
    return [
      problem(
        'orphans',
        `${orphans.logins.length} login(s) under "${orphans.prefix}" that no consumer claims (orphans, as of ${orphans.at}): ${some}; declare them, remove them by hand, or set orphans.remove`,
      ),
    ];
  },
  ({ unsealed }) => (unsealed && unsealed.length > 0 ? [problem('unsealed', unsealedLine(unsealed))] : []),
  ({ states, lastCheckAt, timing, now }) =>
    timing && inState(states, 'held') > 0 && lastCheckAt !== null && now - lastCheckAt > silenceLimitMs(timing)
      ? [problem('checksSilent', silentFor(now - lastCheckAt))]
      : [],
  ({ states }) => problemsOf('unserved', unservedLines(states)),
];

/**
 * `node 127.0.0.1:6379 restarted at 06:05:10 (new run id): 6,120 of 10,000 consumers not asked since` (said after
 * `provider cache:`, as every line of a provider is).
 */
function suspectLine({ count, event }: Suspects): string {
  const of = event ? Math.max(event.of, count) : count;
  const what = event ? `node ${event.node} ${nodeEventWords(event.why, event.at)}` : 'a node event';
  const [left, all] = [count.toLocaleString('en-US'), of.toLocaleString('en-US')];
  return `${what}: ${left} of ${all} consumer${of === 1 ? '' : 's'} not asked since`;
}

/**
 * Consumers whose noted state fails its seal: written into the queue's Redis by another (a forged verdict), or by a
 * release before seals until a sweep notes them again. Unknown, so not served: neither counted as held nor taken as asked.
 */
function unsealedLine(keys: readonly string[]): string {
  const n = keys.length;
  const some = `${[...keys].sort().slice(0, 5).join(', ')}${n > 5 ? ', …' : ''}`;
  return `${n} consumer state${n === 1 ? '' : 's'} in the queue's Redis that holdfast did not write (${some}): unverified, taken as not asked; forged by a writer of that Redis, or left by a release before seals until the next sweep notes ${n === 1 ? 'it' : 'them'} again`;
}

/** Whether consumers in `state` are served (`unreadable`: a record this holdfast cannot read, not). */
const servedState = (state: string): boolean =>
  state !== 'unreadable' && STATE_MEANINGS[state as ConsumerStateName]?.healthy === true;

/**
 * The provider's consumers whose state is not served, counted by state: the line that names
 * why a provider with such consumers is red, whether or not each is listed (rejected ones have
 * their own line).
 */
function unservedLines(states: Record<string, number>): string[] {
  const counts = Object.entries(states)
    .filter(([state, n]) => n > 0 && state !== 'rejected' && !servedState(state))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const n = counts.reduce((sum, [, count]) => sum + count, 0);
  return n > 0
    ? [
        `${n} consumer${n === 1 ? '' : 's'} not served (${counts.map(([state, count]) => `${count} ${state}`).join(', ')})`,
      ]
    : [];
}

/**
 * Held consumers of a provider whose checks are silent while others' are not (the provider-wide silence has its own
 * line).
 */
function silentLine(count: number, timing: ProviderFacts['timing']): string {
  const over = timing ? ` for over ${ago(silenceLimitMs(timing))}` : '';
  return `${count}${count >= SILENT_LISTED ? ' or more' : ''} held consumer${count === 1 ? '' : 's'} not asked${over}: their checks may be lost or queued behind a backlog (listed)`;
}

/**
 * Consumers listed as not served that no line of their provider accounts for (their notes changed while the status read
 * them).
 */
function listedLine(unserved: readonly ConsumerStatus[]): string {
  const some = unserved
    .slice(0, 5)
    .map((c) => `${c.consumer} (${c.problem ?? c.label})`)
    .join(', ');
  return `${unserved.length} consumer${unserved.length === 1 ? '' : 's'} not served as last noted: ${some}${unserved.length > 5 ? ', …' : ''}`;
}

/** The last check: the one the queue's Redis remembers when it is newer than the record's. */
function lastCheckOf(brief: ConsumerBrief, memo: CheckMemo | undefined): ConsumerBrief['lastCheck'] {
  if (memo && (!brief.lastCheck || memo.at > brief.lastCheck.at))
    return { at: memo.at, outcome: memo.outcome, detail: memo.detail };
  return brief.lastCheck;
}

function consumerStatus(
  key: string,
  brief: ConsumerBrief,
  memo: CheckMemo | undefined,
  timing: ProviderFacts['timing'],
  now: number,
  backlog?: { agoMs: number },
): ConsumerStatus {
  const meaning =
    brief.state === 'unreadable'
      ? { label: brief.reason ?? 'unreadable', healthy: false }
      : STATE_MEANINGS[brief.state];
  const lastCheck = lastCheckOf(brief, memo);
  // a routine check reschedules itself without writing: after the record's due time, the next is one wait after the
  // last check
  const due = brief.dueAt;
  const next =
    due !== null && lastCheck && due <= lastCheck.at && timing ? lastCheck.at + verifyDelay(key, timing) : due;
  const silent = brief.state === 'held' && timing ? now - Math.max(lastCheck?.at ?? 0, brief.since) : 0;
  const problem = timing && silent > silenceLimitMs(timing) ? silentFor(silent, backlog) : null;
  const refused = brief.refused ? `new spec refused by policy, the last accepted one kept: ${brief.refused}` : null;
  return {
    consumer: key,
    provider: providerOf(key),
    login: brief.login,
    state: brief.state,
    label: refused ? `${meaning.label}; new spec refused` : meaning.label,
    healthy: meaning.healthy && problem === null && refused === null,
    since: new Date(brief.since).toISOString(),
    lastCheck: lastCheck ? { ...lastCheck, at: new Date(lastCheck.at).toISOString() } : null,
    nextAt: next === null ? null : new Date(next).toISOString(),
    brakeCount: brief.brakeCount,
    reason: refused ?? brief.reason,
    problem,
    refused,
  };
}

export async function statusReport(
  sources: StatusSources,
  now: Date,
  options: StatusOptions = {},
): Promise<StatusReport> {
  const { store } = sources;
  const { reads: coordination, outages } = readsForReport(sources.coordination, options.shardWaits ?? null);
  // a queue whose controls cannot be read is named by the other reads of it
  const controlsRead = sources.controls?.controls().catch(() => []) ?? Promise.resolve([]);
  const controls = outages ? outages.settle(controlsRead, () => []) : controlsRead;
  const [{ states: stateOf, unsealed }, statuses] = await Promise.all([
    coordination.notes.allStates(),
    store.providerStatuses(),
  ]);
  const configured = new Map(sources.providers.map((p) => [p.name, p.timing]));
  const deepCostUs = new Map(sources.providers.map((p) => [p.name, p.adapter?.deepCheckCostUs]));
  const at = now.getTime();

  // counted from each consumer's state alone; only the consumers listed are read in brief
  const states = new Map<string, Record<string, number>>();
  const refused = new Map<string, number>();
  const listed: string[] = [];
  for (const [key, encoded] of Object.entries(stateOf)) {
    const provider = providerOf(key);
    const state = briefState(encoded);
    const counts = states.get(provider) ?? {};
    counts[state] = (counts[state] ?? 0) + 1;
    states.set(provider, counts);
    const refusedSpec = briefRefused(encoded);
    if (refusedSpec) refused.set(provider, (refused.get(provider) ?? 0) + 1);
    if (options.all || refusedSpec || state === 'unreadable' || !STATE_MEANINGS[state].healthy) listed.push(key);
  }

  const unsealedOf = new Map<string, string[]>();
  for (const key of unsealed) unsealedOf.set(providerOf(key), [...(unsealedOf.get(providerOf(key)) ?? []), key]);
  const names = [
    ...new Set([...configured.keys(), ...statuses.map((s) => s._id), ...states.keys(), ...unsealedOf.keys()]),
  ].sort();
  // shown, never red: a read that fails shows none; on a sharded queue, one that does not answer within a shard's wait
  const oldRead = sources.oldConnections?.oldConnections(names).catch(() => undefined) ?? Promise.resolve(undefined);
  const oldConnections = outages ? outages.settle(oldRead, () => undefined) : oldRead;
  const [alive, paused, couldNotAsk, suspects, lastCheckAt, asked, orphans, nodes, contests, failedLogins, old] =
    await Promise.all([
      coordination.signals.alive(),
      coordination.signals.pauses(names),
      coordination.signals.couldNotAskCounts(names),
      coordination.signals.suspects(names),
      coordination.notes.lastCheckedAt(names),
      coordination.notes.askedCounts(names),
      coordination.notes.orphans(names),
      coordination.notes.nodes(names),
      coordination.contests.contested(names, at, CONTESTED_LISTED),
      coordination.notes.failedLogins(names),
      oldConnections,
    ]);
  /**
   * Held consumers not asked for too long (since they became held counts as asked), by provider; up to SILENT_LISTED
   * each.
   */
  const silent = new Map<string, string[]>();
  /** The briefs read so far, by key: each consumer's is read once. */
  const known = new Map<string, ConsumerBrief>();
  const knownMemos = new Map<string, CheckMemo>();
  await Promise.all(
    names.map(async (name) => {
      const timing = configured.get(name);
      if (!timing || inState(states.get(name) ?? {}, 'held') === 0) return;
      const before = at - silenceLimitMs(timing);
      // none of the provider's checks ends: its own line says so once, and its consumers are not looked at one by one
      const last = lastCheckAt.get(name);
      if (last !== undefined && last < before) return;
      const candidates = (await coordination.notes.checkedBefore(name, before, SILENT_LISTED))
        .map(([key]) => key)
        .filter((key) => stateOf[key] !== undefined && briefState(stateOf[key]) === 'held');
      const [briefs, memos] = await Promise.all([
        coordination.notes.briefsOf(candidates),
        coordination.locks.checkMemos(candidates),
      ]);
      for (const [key, brief] of briefs) known.set(key, brief);
      for (const [key, memo] of memos) knownMemos.set(key, memo);
      // silent as its own line will say it: its last check (the memo's or the brief's, the newer) and its becoming held
      // are both old
      silent.set(
        name,
        candidates.filter((key) => {
          const brief = briefs.get(key);
          return brief !== undefined && Math.max(brief.since, lastCheckOf(brief, memos.get(key))?.at ?? 0) < before;
        }),
      );
    }),
  );

  /**
   * Providers none of whose held consumers is asked: their own line says so, their consumers are not listed one by one.
   */
  const checksSilent = new Set<string>();
  const providers = names.map((name): ProviderHealth => {
    const facts: ProviderFacts = {
      name,
      configured: configured.has(name),
      timing: configured.get(name),
      status: statuses.find((s) => s._id === name),
      pause: paused.get(name) ?? null,
      states: states.get(name) ?? {},
      lastCheckAt: lastCheckAt.get(name) ?? null,
      couldNotAsk: couldNotAsk.get(name) ?? 0,
      suspects: suspects.get(name),
      refused: refused.get(name) ?? 0,
      orphans: orphans.get(name),
      unsealed: unsealedOf.get(name),
      nodes: nodes.get(name),
      now: at,
      uncountedShards: outages?.list().filter((shard) => !shard.counted).length ?? 0,
    };
    const found = PROVIDER_CHECKS.flatMap((check) => check(facts));
    const silentCount = silent.get(name)?.length ?? 0;
    if (silentCount > 0 && !found.some((p) => p.kind === 'checksSilent'))
      found.push(problem('consumersSilent', silentLine(silentCount, facts.timing)));
    if (found.some((p) => p.kind === 'checksSilent')) checksSilent.add(name);
    const consumers = Object.values(facts.states).reduce((a, b) => a + b, 0);
    // the states noted count every consumer with a record: the workers' count (those asked about) once all are held
    const deepCheckEveryMs = facts.timing
      ? deepCheckIntervalMs({ timing: facts.timing, costUs: deepCostUs.get(name), consumers })
      : null;
    const declared = facts.status && facts.status.lastGoodAt !== null ? facts.status.consumers : null;
    const applies = declared === null ? null : firstApplyCount(asked.get(name) ?? 0, declared);
    return {
      provider: name,
      // red only with a line saying why: every unserved state and every silent consumer has one above
      healthy: found.length === 0,
      consumers,
      declared,
      states: facts.states,
      firstApplies: applies && outstanding(applies) ? { ...applies, perSecond: null, leftS: null } : null,
      contributionsError: facts.status?.contributionsError ?? null,
      paused: facts.pause,
      lastCheckAt: facts.lastCheckAt === null ? null : new Date(facts.lastCheckAt).toISOString(),
      couldNotAsk: facts.couldNotAsk,
      suspects: facts.suspects && facts.suspects.count > 0 ? facts.suspects : null,
      deepCheckEveryMs,
      nodes: (facts.nodes?.nodes ?? []).map((n) => ({
        address: n.address,
        role: n.role,
        answers: n.answering,
        missing: n.missing ?? 0,
      })),
      problems: found.map((p) => p.text),
      contested: contestedOf(contests.get(name)),
      failedLogins: failedLoginsOf(failedLogins.get(name)),
      oldConnections: oldConnectionsOf(old?.get(name)),
    };
  });

  // a held consumer not asked for too long is not served; when none of its provider's are asked, the provider's line
  // says so once
  for (const p of providers) {
    if (options.all || checksSilent.has(p.provider)) continue;
    listed.push(...(silent.get(p.provider) ?? []));
  }
  listed.sort();
  const silentKeys = new Set([...silent.values()].flat());
  const silentListed = listed.filter((key) => silentKeys.has(key));
  const [memos, briefs, queued] = await Promise.all([
    coordination.locks.checkMemos(listed.filter((key) => !knownMemos.has(key))),
    coordination.notes.briefsOf(listed.filter((key) => !known.has(key))),
    behindBacklog(silentListed, sources, stateOf, lastCheckAt, at, outages),
  ]);
  const consumers = listed.flatMap((key) => {
    const brief = known.get(key) ?? briefs.get(key);
    const backlog = queued.has(key) ? { agoMs: at - lastCheckAt.get(providerOf(key))! } : undefined;
    return brief
      ? [
          consumerStatus(
            key,
            brief,
            knownMemos.get(key) ?? memos.get(key),
            configured.get(providerOf(key)),
            at,
            backlog,
          ),
        ]
      : [];
  });
  // a consumer listed as not served whose provider has no line for it (its notes changed between reads): named all the
  // same
  for (const p of providers) {
    const unserved = consumers.filter((c) => !c.healthy && c.provider === p.provider);
    if (p.healthy && unserved.length > 0) {
      p.problems.push(listedLine(unserved));
      p.healthy = false;
    }
  }
  const total = providers.reduce((n, p) => n + p.consumers, 0);
  const unreadableShards = outages?.list() ?? [];
  const problems = [
    ...unreadableShards.map(unreadableShardLine),
    ...(await controls).map(controlLine),
    // the sync marks the queue alive after its first sweep; a queue without the mark forgot (or never had) every job
    ...(!alive && statuses.length > 0
      ? [
          "the queue's Redis has forgotten every job (restarted empty, or flushed): a running `holdfast run` re-creates them within sentinelEvery",
        ]
      : []),
  ];
  return {
    at: now.toISOString(),
    healthy: problems.length === 0 && providers.every((p) => p.healthy) && consumers.every((c) => c.healthy),
    problems,
    unreadableShards,
    providers,
    total,
    unserved: consumers.filter((c) => !c.healthy).length,
    listing: options.all ? 'all' : 'unserved',
    consumers,
  };
}

/** The report when the record store (or the queue's Redis) cannot be read: red, naming why. */
export function unreachableReport(now: Date, problems: string[]): StatusReport {
  return {
    at: now.toISOString(),
    healthy: false,
    problems,
    unreadableShards: [],
    providers: [],
    total: 0,
    unserved: 0,
    listing: 'unserved',
    consumers: [],
  };
}

/** The report's own lines and its providers' (`provider cache: …`): every reason it is red but the consumers listed. */
export function reportLines(report: StatusReport): string[] {
  return [
    ...report.problems,
    ...report.providers.flatMap((p) => p.problems.map((line) => `provider ${p.provider}: ${line}`)),
  ];
}

/** Every reason the report is red, one line each (`provider cache: …`, `cache/photos: …`). */
export function redReasons(report: StatusReport): string[] {
  return [
    ...reportLines(report),
    ...report.consumers
      .filter((c) => !c.healthy)
      .map(
        (c) => `${c.consumer}: ${c.problem ?? `${c.label}${c.reason && c.label !== c.reason ? ` (${c.reason})` : ''}`}`,
      ),
  ];
}

/**
 * One job, one consumer: take the consumer's lock and load its record, compute each next
 * snapshot with XState's pure `transition()`, persist it (compare-and-swap on the
 * revision), perform the effect it asks for and feed the result back, until the machine
 * rests. Timers become delayed jobs carrying the revision that scheduled them.
 *
 * Writes: an apply or a remove is preceded by a write of the state that performs it (a
 * worker killed mid-apply leaves a record that says so); a routine check that finds the
 * consumer held writes only its timer, due time and last check.
 */
import { transition, type SnapshotFrom } from 'xstate';
import type { ConsumerEvent, EffectType } from '../machines/consumer-events.js';
import { EFFECT_STATES, type ConsumerMachine, type ConsumerStateName } from '../machines/consumer-machine.js';
import { HoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import { randomUUID } from 'node:crypto';
import type { ConsumerJobData, ConsumerQueue } from '../src/queue/consumer-queue.js';
import type { ConsumerLocks } from '../src/queue/consumer-lock.js';
import type { ConsumerRecord, HistoryEntry, LastCheck, TimerRecord } from '../src/store/consumer-record.js';
import type { ConsumerStore, RecordChange } from '../src/store/consumer-store.js';
import type { Effects } from './effects.js';
import type { ProviderRuntime } from './provider-runtime.js';

/** Time added to an effect's deadline for the lock (and the record's effect horizon) that covers it. */
export const LOCK_MARGIN_MS = 10_000;

export interface JobDeps {
  store: ConsumerStore;
  queue: ConsumerQueue;
  locks: ConsumerLocks;
  providers: ReadonlyMap<string, ProviderRuntime>;
  effects: Effects;
  logger: Logger;
  now: () => Date;
}

export type JobOutcome = 'done' | 'stale' | 'absent' | 'busy' | 'unknown-provider';

type Snapshot = SnapshotFrom<ConsumerMachine>;

const EFFECTS: ReadonlySet<string> = new Set<EffectType>(['apply', 'check', 'remove']);

function stateOf(snapshot: Snapshot): ConsumerStateName {
  return snapshot.value;
}

function persisted(machine: ConsumerMachine, snapshot: Snapshot): unknown {
  return machine.getPersistedSnapshot(snapshot);
}

/** The event a `sync` job delivers: what the record's desired spec asks of the machine now. */
function desiredEvent(record: ConsumerRecord): ConsumerEvent | undefined {
  const { desired, state } = record;
  if (desired.removed) return state === 'removing' || state === 'removeRetrying' ? undefined : { type: 'REMOVE' };
  if (desired.problems.length > 0) return state === 'rejected' ? undefined : { type: 'REJECT', problems: desired.problems };
  return { type: 'DESIRED', specHash: desired.specHash };
}

function checkOutcome(event: ConsumerEvent, at: Date): LastCheck | undefined {
  switch (event.type) {
    case 'HELD':
      return { at, outcome: 'held', detail: null };
    case 'NOT_HELD':
      return { at, outcome: 'not-held', detail: `${event.reason}: ${event.detail}` };
    case 'CHECK_FAILED':
      return { at, outcome: 'could-not-ask', detail: event.error };
    case 'CHANGED':
      return { at, outcome: 'changed', detail: event.what };
    default:
      return undefined;
  }
}

export async function processConsumerJob(data: ConsumerJobData, deps: JobDeps): Promise<JobOutcome> {
  const providerName = data.key.slice(0, data.key.indexOf('/'));
  const provider = deps.providers.get(providerName);
  if (!provider) {
    deps.logger.warn({ consumer: data.key }, `no provider "${providerName}" in this configuration; job skipped`);
    return 'unknown-provider';
  }
  const lockMs = provider.config.timing.checkTimeoutMs + LOCK_MARGIN_MS;
  const token = randomUUID();
  if (!(await deps.locks.acquire(data.key, token, lockMs))) return 'busy';
  try {
    const record = await deps.store.get(data.key);
    if (!record) return 'absent';
    // mid-effect by a worker whose lock was lost with the queue's Redis: wait for its deadline
    if (EFFECT_STATES.has(record.state) && record.effectUntil && record.effectUntil > deps.now()) return 'busy';
    return await run(data, record, provider, deps, () => deps.locks.extend(data.key, token, lockMs));
  } finally {
    await deps.locks.release(data.key, token);
  }
}

async function run(
  data: ConsumerJobData,
  record: ConsumerRecord,
  provider: ProviderRuntime,
  deps: JobDeps,
  extendLock: () => Promise<boolean>,
): Promise<JobOutcome> {
  const { machine } = provider;
  const key = record._id;
  const log = deps.logger.child({ consumer: key });

  const events: ConsumerEvent[] = [];
  if (EFFECT_STATES.has(record.state)) events.push({ type: 'RESUME' });
  if (data.kind === 'timer') {
    if (record.timer?.epoch === data.epoch && record.timer.event === data.event) events.push({ type: data.event } as unknown as ConsumerEvent);
  } else if (data.kind === 'event') {
    events.push(data.event);
  } else {
    const event = desiredEvent(record);
    if (event) events.push(event);
  }
  if (events.length === 0 && !(data.kind === 'sync' && record.dirty)) return 'stale';

  const stored = record.snapshot as { value: string; context: Snapshot['context'] };
  let snapshot: Snapshot = machine.resolveState({ value: stored.value, context: stored.context });
  let savedJson = JSON.stringify(persisted(machine, snapshot));
  let savedState = record.state;
  let rev = record.rev;
  let history: HistoryEntry[] = record.history;
  let timer: TimerRecord | null = record.timer;
  let timerIsNew = false;
  let lastCheck: LastCheck | undefined;
  let applied: ConsumerRecord['applied'] | undefined;
  let delivered = data.kind === 'sync' && record.dirty ? record.desiredRev : undefined;
  /** What the log will say once the change it describes is written. */
  let sayings: Array<() => void> = [];

  const save = async (effectUntil: Date | null): Promise<void> => {
    const now = deps.now();
    const json = JSON.stringify(persisted(machine, snapshot));
    const state = stateOf(snapshot);
    const change: RecordChange = {
      timer: timerIsNew && timer ? { ...timer, epoch: rev + 1 } : timer,
      nextDueAt: effectUntil ?? timer?.dueAt ?? null,
      effectUntil,
    };
    if (json !== savedJson) change.snapshot = persisted(machine, snapshot);
    if (state !== savedState) {
      const { reason } = snapshot.context;
      change.state = state;
      change.transition = { at: now, from: savedState, to: state, reason };
      const from = savedState;
      sayings.push(() => log.info({ from, to: state, reason }, `${from} → ${state}${reason ? `: ${reason}` : ''}`));
    }
    if (lastCheck) change.lastCheck = lastCheck;
    if (applied !== undefined) change.applied = applied;
    if (delivered !== undefined) change.delivered = delivered;
    rev = await deps.store.save(key, rev, change, history, now);
    for (const saying of sayings) saying();
    sayings = [];
    delivered = undefined;
    if (change.transition) history = [...history, change.transition];
    timer = change.timer;
    savedJson = json;
    savedState = state;
    lastCheck = undefined;
    applied = undefined;
    if (timerIsNew && timer) {
      timerIsNew = false;
      if (effectUntil === null) await deps.queue.timer(key, timer, now);
    }
  };

  for (const first of events) {
    let event: ConsumerEvent | undefined = first;
    while (event) {
      const [next, actions] = transition(machine, snapshot, event);
      snapshot = next;
      let effect: EffectType | undefined;
      for (const action of actions) {
        const type: string = action.type;
        if (type === 'say') {
          const { level, message } = action.params as { level: 'info' | 'warn' | 'error'; message: string };
          sayings.push(() => log[level]({ state: stateOf(next) }, message));
        } else if (type === 'xstate.cancel') {
          timer = null;
          timerIsNew = false;
        } else if (type === 'xstate.raise') {
          const params = action.params as { event: { type: string }; delay?: number };
          if (params.delay !== undefined) {
            timer = { epoch: 0, event: params.event.type, dueAt: new Date(deps.now().getTime() + params.delay) };
            timerIsNew = true;
          }
        } else if (EFFECTS.has(type)) {
          effect = type as EffectType;
        }
      }
      if (!effect) break;
      if (!(await extendLock())) throw new HoldfastError('REVISION_CONFLICT', `lost the lock on ${key} before ${effect}`);
      if (effect !== 'check') await save(new Date(deps.now().getTime() + provider.config.timing.checkTimeoutMs + LOCK_MARGIN_MS));
      event = await deps.effects[effect]({ key, provider, desired: record.desired, context: snapshot.context });
      lastCheck = effect === 'check' ? checkOutcome(event, deps.now()) : lastCheck;
      if (event.type === 'APPLIED') applied = { specHash: event.specHash, secretMac: event.secretMac, at: deps.now() };
    }
  }

  if (snapshot.status === 'done') {
    await deps.store.delete(key, rev);
    for (const saying of sayings) saying();
    log.info({ from: savedState, to: 'removed' }, `${savedState} → removed: login ${record.desired.login} is gone from ${provider.config.name}; record deleted`);
    return 'done';
  }
  await save(null);
  return 'done';
}

/**
 * The chart's answer to an event, computed once and reused: a routine check steps every held
 * consumer through the same two transitions (the verify wait's end, then `HELD`), and XState's
 * pure transition (restore, microsteps, a new snapshot) cost a routine check more than the rest of
 * the machine's work. The chart stays the only authority: every answer here is one it gave, by
 * {@link step}, for a consumer that differed at most in its key.
 *
 * An answer is kept under everything the transition reads: the state, every field of the context
 * but the key, and the event. The key is read by one thing only, the verify wait's jitter
 * (`delays.ts`), so an answer is given to another consumer with its own key put back and the
 * length of the wait asked for computed again by the chart's own delay for that consumer. The
 * fingerprints ({@link FINGERPRINTS}: what was applied, and what an event says was) are each
 * consumer's own, and the chart only tells whether one is there and whether two are the same: an
 * answer is kept under which of them are null and which are equal, not their values, and given
 * with the consumer's own put back; an answer whose fingerprint is none of those it was asked with,
 * or whose other words or announcements hold one, is stepped, not kept. Else every consumer would
 * have answers of its own, and a fleet larger than the table would never have its steps returned from it. A
 * context or an event holding anything but text, numbers, booleans and null is stepped, not
 * kept. That the answers are the chart's, for any consumer and any history, is shown by a
 * generated test (`test/unit/machines/step-memo.test.ts`); a chart that came to read the key
 * elsewhere, or a fingerprint otherwise than by its presence and its equality, would fail it.
 */
import type { Announcement, ConsumerEvent } from './consumer-events.js';
import type { ConsumerContext, ConsumerMachine } from './consumer-machine.js';
import {
  persist,
  restore,
  step,
  type ConsumerSnapshot,
  type EffectType,
  type PersistedConsumer,
  type Step,
  type Wait,
  type WaitName,
} from './machine-step.js';

/** What one event did to a persisted consumer: {@link Step} without XState's snapshot. */
export interface PersistedStep {
  consumer: PersistedConsumer;
  effect: EffectType | undefined;
  /** The wait the new state asks for; `null` when the step cancelled the wait; `undefined` when it left it alone. */
  wait: Wait | null | undefined;
  said: Announcement[];
}

/** An answer kept: the step's outcome for the consumer it was computed for, the key aside. */
interface Answer {
  state: PersistedConsumer['state'];
  /** Its fingerprints null: see {@link fingerprints}. */
  context: ConsumerContext;
  /** Each fingerprint of the context: null, or which of the fingerprints asked with it is ({@link Asked.values}). */
  fingerprints: Array<number | null>;
  effect: EffectType | undefined;
  wait: WaitName | null | undefined;
  said: readonly Announcement[];
}

/** The context's fields and the events' fields that are fingerprints: compared by the chart, never read otherwise. */
const FINGERPRINTS = ['appliedSpecHash', 'appliedSecretMac'] as const;
const EVENT_FINGERPRINTS: ReadonlySet<string> = new Set(['specHash', 'secretMac']);
const CONTEXT_FINGERPRINTS: ReadonlySet<string> = new Set(FINGERPRINTS);

/** What an answer is kept under, and the fingerprints it was asked with, in the order the key names them. */
interface Asked {
  key: string;
  values: string[];
}

/** How many answers a machine keeps at most; all let go when full (a healthy fleet needs a handful). */
const MAX_ANSWERS = 4096;

type Delay = number | ((args: { context: ConsumerContext; event: ConsumerEvent }) => number);

const answers = new WeakMap<ConsumerMachine, Map<string, Answer>>();

function answersOf(machine: ConsumerMachine): Map<string, Answer> {
  let found = answers.get(machine);
  if (!found) answers.set(machine, (found = new Map<string, Answer>()));
  return found;
}

/** One value as text that tells it from any other value; undefined for what is not kept (an object, an array). */
function valueKey(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return `s${value.length}:${value}`;
    case 'number':
      return `n${value}`;
    case 'boolean':
      return value ? 't' : 'f';
    case 'undefined':
      return 'u';
    default:
      return value === null ? 'z' : undefined;
  }
}

/** A fingerprint as text: which of `values` it is (added when new); null as any null. */
function fingerprintKey(value: unknown, values: string[]): string | undefined {
  if (typeof value !== 'string') return value === null ? 'z' : undefined;
  let at = values.indexOf(value);
  if (at < 0) at = values.push(value) - 1;
  return `#${at}`;
}

/**
 * The fields of `fields` but `skip`, as text, its fingerprints (`opaque`) by {@link fingerprintKey}; undefined when
 * one of them is not kept.
 */
function fieldsKey(
  fields: object,
  skip: string | undefined,
  opaque: ReadonlySet<string>,
  values: string[],
): string | undefined {
  let text = '';
  for (const name in fields) {
    if (name === skip || !Object.hasOwn(fields, name)) continue;
    const value = (fields as Record<string, unknown>)[name];
    const v = opaque.has(name) ? fingerprintKey(value, values) : valueKey(value);
    if (v === undefined) return undefined;
    text += `\0${name}=${v}`;
  }
  return text;
}

/** What the answer to `event` for `from` is kept under; undefined when it is not kept. */
function answerKey(from: PersistedConsumer, event: ConsumerEvent): Asked | undefined {
  const values: string[] = [];
  const context = fieldsKey(from.context, 'key', CONTEXT_FINGERPRINTS, values);
  const happened = context === undefined ? undefined : fieldsKey(event, undefined, EVENT_FINGERPRINTS, values);
  return happened === undefined ? undefined : { key: `${from.state}\0${context}\0\0${happened}`, values };
}

/** The chart's step on `event` for a consumer persisted as `from`: {@link step}, on the restored snapshot. */
function stepPersisted(machine: ConsumerMachine, from: PersistedConsumer, event: ConsumerEvent): PersistedStep {
  const stepped = step(machine, restore(machine, from), event);
  keepStep(machine, from, event, stepped);
  return persistedStep(stepped);
}

/** {@link stepPersisted}, returned from what the chart returned before for a consumer that differed only in its key. */
export function memoStep(machine: ConsumerMachine, from: PersistedConsumer, event: ConsumerEvent): PersistedStep {
  return keptStep(machine, from, event) ?? stepPersisted(machine, from, event);
}

/** A step as {@link PersistedStep}. */
function persistedStep({ snapshot, effect, wait, said }: Step): PersistedStep {
  return { consumer: persist(snapshot), effect, wait, said };
}

/** Keeps `stepped`, the chart's step on `event` for a consumer persisted as `from`. */
export function keepStep(machine: ConsumerMachine, from: PersistedConsumer, event: ConsumerEvent, stepped: Step): void {
  const asked = answerKey(from, event);
  if (asked === undefined) return;
  const { snapshot, effect, wait, said } = stepped;
  const answer = fingerprinted(snapshot.context, said, asked.values);
  if (answer === undefined) return;
  const kept = answersOf(machine);
  if (kept.size >= MAX_ANSWERS) kept.clear();
  kept.set(asked.key, { state: snapshot.value, ...answer, effect, wait: wait ? wait.name : wait, said });
}

/**
 * An answer's context with its fingerprints told as which of `values` (those it was asked with) each is, or undefined
 * when it cannot be kept so: a fingerprint none of them, or one of them in its other words or in what it says.
 */
function fingerprinted(
  context: ConsumerContext,
  said: readonly Announcement[],
  values: readonly string[],
): Pick<Answer, 'context' | 'fingerprints'> | undefined {
  const fingerprints: Array<number | null> = [];
  for (const name of FINGERPRINTS) {
    const value = context[name];
    const at = value === null ? null : values.indexOf(value);
    if (at === -1) return undefined;
    fingerprints.push(at);
  }
  const kept: ConsumerContext = { ...context, appliedSpecHash: null, appliedSecretMac: null };
  const words = JSON.stringify({ ...kept, key: null, said });
  const holds = (value: string) => words.includes(JSON.stringify(value).slice(1, -1));
  return values.some(holds) ? undefined : { context: kept, fingerprints };
}

/**
 * The chart's step on `event` for a consumer persisted as `from`, as it returned it before for a consumer that differed
 * at most in its key; undefined when it has not (the chart not stepped).
 */
export function keptStep(
  machine: ConsumerMachine,
  from: PersistedConsumer,
  event: ConsumerEvent,
): PersistedStep | undefined {
  const asked = answerKey(from, event);
  const answer = asked === undefined ? undefined : answers.get(machine)?.get(asked.key);
  if (answer === undefined) return undefined;
  const context = { ...answer.context, key: from.context.key };
  FINGERPRINTS.forEach((name, i) => {
    const at = answer.fingerprints[i];
    context[name] = at === null || at === undefined ? null : asked!.values[at]!;
  });
  return {
    consumer: { state: answer.state, context },
    effect: answer.effect,
    wait: answer.wait ? { name: answer.wait, ms: delayOf(machine, answer.wait, context, event) } : answer.wait,
    said: answer.said.length === 0 ? [] : answer.said.slice(),
  };
}

/** A step on a persisted consumer: {@link Step}, with the consumer as persisted; XState's snapshot made when read. */
export interface KeptStep extends Step {
  readonly consumer: PersistedConsumer;
}

/** A consumer persisted as `consumer`, at rest, as a step to take the next from. */
export function restingAt(machine: ConsumerMachine, consumer: PersistedConsumer): KeptStep {
  return keptAsStep(machine, { consumer, effect: undefined, wait: undefined, said: [] });
}

/**
 * A kept answer as a {@link Step}: a heal steps every consumer of a cache that forgot them through the same transitions,
 * and XState's snapshot of each is restored only if it is read (a run carried on against the record).
 */
export function keptAsStep(machine: ConsumerMachine, kept: PersistedStep): KeptStep {
  let snapshot: ConsumerSnapshot | undefined;
  return {
    ...kept,
    get snapshot() {
      return (snapshot ??= restore(machine, kept.consumer));
    },
  };
}

/** The length of the wait `name` the chart asks of a consumer entering a state with `context`, on `event`. */
function delayOf(machine: ConsumerMachine, name: WaitName, context: ConsumerContext, event: ConsumerEvent): number {
  const delay = (machine.implementations.delays as Record<WaitName, Delay>)[name];
  return typeof delay === 'number' ? delay : delay({ context, event });
}

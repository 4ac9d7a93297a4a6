/**
 * The chart's states under the names earlier releases gave them. What an earlier release wrote (a record's machine,
 * a ticket, a brief, a history entry, a timeline event) is read in this chart's words where it is read, here alone;
 * nothing is written under a former name.
 */
import type { ConsumerStateName } from './consumer-machine.js';

/** Each former name and the state it names now (a Map: a stored name is never looked up on a prototype). */
const FORMER_STATES: ReadonlyMap<string, ConsumerStateName> = new Map([
  ['verifying', 'checking'], // the former name, until machine version 2
]);

/** `name` in this chart's words: the state a former name names now, else `name` unchanged. */
export function currentStateName(name: string): string {
  return FORMER_STATES.get(name) ?? name;
}

/** Like {@link currentStateName}, for a value read from anywhere: what is not text is returned unchanged. */
export function currentStateOf(value: unknown): unknown {
  return typeof value === 'string' ? currentStateName(value) : value;
}

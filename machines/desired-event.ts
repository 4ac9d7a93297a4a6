/**
 * What a desired spec means to the machine: accept it (`DESIRED`), refuse it because its
 * provider's policy does (`REJECT`), or remove the consumer (`REMOVE`).
 */
import type { ConsumerEvent } from './consumer-events.js';
import type { ConsumerStateName } from './consumer-machine.js';

/** The parts of a desired spec the machine looks at. */
export interface DesiredFacts {
  removed: boolean;
  /** Why the provider's policy refuses the consumer; empty when it does not. */
  problems: readonly string[];
  specHash: string;
}

/** The event a desired spec delivers to a consumer in `state`; undefined when it asks nothing new. */
export function desiredEvent(desired: DesiredFacts, state: ConsumerStateName): ConsumerEvent | undefined {
  if (desired.removed) return { type: 'REMOVE' };
  if (desired.problems.length > 0) return state === 'rejected' ? undefined : { type: 'REJECT', problems: [...desired.problems] };
  return { type: 'DESIRED', specHash: desired.specHash };
}

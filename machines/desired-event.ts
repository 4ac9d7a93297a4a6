/**
 * What a desired spec means to the machine: accept it (`DESIRED`), refuse it because its
 * provider's policy does (`REJECT`), or remove the consumer (`REMOVE`). A refused spec of a
 * consumer that was accepted once asks nothing of the machine: it keeps its last accepted
 * spec, applied and checked ({@link keepsAccepted}), and the refusal is reported beside it.
 */
import type { ConsumerEvent } from './consumer-events.js';
import { REMOVING_STATES, type ConsumerStateName } from './consumer-machine.js';

/** The parts of a desired spec the machine looks at. */
export interface DesiredFacts {
  removed: boolean;
  /** Why the provider's policy refuses the consumer; empty when it does not. */
  problems: readonly string[];
  specHash: string;
}

/**
 * Whether a refused spec leaves the consumer on its last accepted spec: it has one (it was applied), and is not being
 * removed.
 */
export function keepsAccepted(
  desired: DesiredFacts,
  consumer: { state: ConsumerStateName; context: { appliedSpecHash: string | null } },
): boolean {
  return (
    !desired.removed &&
    desired.problems.length > 0 &&
    consumer.context.appliedSpecHash !== null &&
    !REMOVING_STATES.has(consumer.state)
  );
}

/** The event a desired spec delivers to a consumer in `state`; undefined when it asks nothing new. */
export function desiredEvent(desired: DesiredFacts, state: ConsumerStateName): ConsumerEvent | undefined {
  if (desired.removed) return { type: 'REMOVE' };
  if (desired.problems.length > 0)
    return state === 'rejected' ? undefined : { type: 'REJECT', problems: [...desired.problems] };
  return { type: 'DESIRED', specHash: desired.specHash };
}

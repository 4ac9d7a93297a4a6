/**
 * How often each consumer of a provider is checked deeply (rules compared): as often as the
 * provider's `deepCheckBudget` of the backend's CPU allows, given what one deep check costs
 * there and how many consumers share the budget, but never less often than `deepCheckEvery`
 * nor more often than `verifyEvery` (a deep check replaces a light one; it adds no check).
 *
 *   interval = consumers × deepCheckCostUs / deepCheckBudget, within [verifyEvery, deepCheckEvery]
 *
 * Pure: the workers, the status and `/metrics` derive the same interval from the same figures.
 */
import type { Timing } from './timing.js';

export interface DeepCheckFigures {
  timing: Pick<Timing, 'verifyEveryMs' | 'deepCheckEveryMs' | 'deepCheckBudget'>;
  /** What one deep check costs the backend (µs of CPU); undefined: not declared. */
  costUs: number | undefined;
  /** Consumers of the provider sharing the budget; undefined: not known yet. */
  consumers: number | undefined;
}

/** The deep-check interval in force (ms): `deepCheckEvery` when the cost, the count or the budget is missing. */
export function deepCheckIntervalMs({ timing, costUs, consumers }: DeepCheckFigures): number {
  const { verifyEveryMs, deepCheckEveryMs, deepCheckBudget } = timing;
  if (costUs === undefined || consumers === undefined || !(deepCheckBudget > 0)) return deepCheckEveryMs;
  // the budget is a share of one core: the fleet's deep checks take consumers × cost of it per round
  const affordableMs = (Math.max(consumers, 1) * costUs) / 1000 / deepCheckBudget;
  return Math.min(deepCheckEveryMs, Math.max(verifyEveryMs, Math.ceil(affordableMs)));
}

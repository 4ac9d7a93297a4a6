/** A coordination for the status's tests: each part answers what it is given, by read. */
import type { Coordination } from '../../src/queue/coordination.js';

type Answer = (...args: never[]) => unknown;

/**
 * Each part's reads answering `answers` (by part, then by read), each made a method by `as` (by default: a promise of
 * the answer).
 */
export function fakeCoordination(
  answers: Partial<Record<keyof Coordination, Record<string, Answer>>>,
  as: (answer: Answer) => Answer = (answer) =>
    (...args) =>
      Promise.resolve(answer(...args)),
): Coordination {
  const parts = Object.entries(answers).map(([part, reads]): [string, unknown] => [
    part,
    Object.fromEntries(Object.entries(reads).map(([name, answer]) => [name, as(answer)])),
  ]);
  return Object.fromEntries(parts) as unknown as Coordination;
}

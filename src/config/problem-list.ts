/**
 * A file's problems as told to a person and kept in the store: at most {@link MAX_LISTED_PROBLEMS}
 * lines, then one that counts the rest. A file with 20,000 bad items stays one readable message
 * (and one store document far below MongoDB's 16 MB).
 */

export const MAX_LISTED_PROBLEMS = 100;

/** The first `max` problems, then `… and 2,345 more` when there are more. */
export function listedProblems(problems: readonly string[], max = MAX_LISTED_PROBLEMS): string[] {
  if (problems.length <= max) return [...problems];
  return [...problems.slice(0, max), `… and ${(problems.length - max).toLocaleString('en-US')} more`];
}

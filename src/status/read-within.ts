/** A status read raced against its wait: it answered, it failed, or it was late. */
export type ReadOutcome<T> = { kind: 'answered'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'late' };

/** `promise`'s outcome, or `late` after `waitMs` (null: as long as it takes, only a failure ends it otherwise). */
export async function within<T>(promise: Promise<T>, waitMs: number | null): Promise<ReadOutcome<T>> {
  const answer = promise.then(
    (value): ReadOutcome<T> => ({ kind: 'answered', value }),
    (error: unknown): ReadOutcome<T> => ({ kind: 'failed', error }),
  );
  if (waitMs === null) return answer;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ReadOutcome<T>>(
    (resolve) => (timer = setTimeout(() => resolve({ kind: 'late' }), Math.max(0, waitMs))),
  );
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Servers started together, as the global setup starts them: when one fails, the others are waited for before the
 * failure is told, so that the set-up's clean-up stops every server that did start (one still starting when the
 * first failed would otherwise start after the clean-up, and be left running).
 */

/** The values of `starting`, once all have settled; the first failure (in their order) once all have settled. */
export async function allStarted<T>(starting: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(starting);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

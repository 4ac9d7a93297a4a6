/**
 * Polls `probe` every 100 ms until it answers (a value other than undefined; a throw counts as no
 * answer), and fails after `timeoutMs` saying what it waited for and, from `describeLast`, what it
 * last saw.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  describeLast: () => Promise<string>,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${await describeLast()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

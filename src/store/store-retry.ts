/**
 * A busy record store is not a failed job. A store error that a moment may cure (a network
 * error, a server being selected, FerretDB's `SQLITE_BUSY`, which it reports as an internal
 * error) is retried here, quietly and with a bound; what remains is a `STORE_UNAVAILABLE`
 * {@link HoldfastError} naming what was being done, in words rather than a driver's call chain.
 */
import { MongoError, MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { jittered } from '../../machines/delays.js';
import { HoldfastError, isHoldfastError } from '../errors/holdfast-error.js';

/** Waits between attempts (ms); their sum bounds how long a caller waits for a busy store. */
const BACKOFF_MS = [50, 100, 200, 400, 800, 1600];
/** MongoDB's InternalError: FerretDB's code for a backend error such as SQLITE_BUSY. */
const INTERNAL_ERROR = 1;

/** Whether a statement a bulk write refused with `code` may take when sent again (FerretDB's `SQLITE_BUSY`). */
export const transientWriteCode = (code: number | undefined): boolean => code === INTERNAL_ERROR;

function transient(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  if (error instanceof MongoServerError && transientWriteCode(error.code as number | undefined)) return true;
  return (
    error instanceof MongoError &&
    (error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError'))
  );
}

/** The server's reason without FerretDB's `[file.go:12 pkg.func]` call chain. */
export function storeReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\[[^\]]*\.go:\d+[^\]]*\]\s*/g, '').trim() || 'unknown error';
}

/** Runs `operation`, retrying transient store errors; `what` completes "the record store could not …". */
export async function withStoreRetry<T>(
  what: string,
  operation: () => Promise<T>,
  sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (isHoldfastError(error)) throw error;
      const wait = BACKOFF_MS[attempt];
      if (!transient(error) || wait === undefined) {
        const tries = attempt === 0 ? '' : ` after ${attempt + 1} attempts`;
        throw new HoldfastError(
          'STORE_UNAVAILABLE',
          `the record store could not ${what}${tries}: ${storeReason(error)}`,
        );
      }
      await sleep(jittered(wait, 0.5, Math.random()));
    }
  }
}

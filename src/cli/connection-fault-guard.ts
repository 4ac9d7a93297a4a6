/**
 * The last resort of `holdfast run` and `holdfast worker` against an error no one caught: the
 * process keeps serving when, and only when, the error is a backend connection lost (typed:
 * see {@link isConnectionFault}); it is logged and counted (`holdfast_unexpected_errors_total`).
 * Anything else is logged and the process exits with status 1, as Node would have.
 *
 * Why going on is sound for those errors, and only there: such an error is thrown out of a
 * driver's socket handling (an `error` event emitted where no listener was, the mistake that
 * issue 25 found on pg's checked-out clients; every connection has a listener now). By the time
 * the driver emits it, it has already failed every call that was using the connection (pg:
 * `_errorAllQueries` before `emit('error')`; ioredis: the command queue flushed with the error;
 * mongodb: the pool cleared) and the connection is never used again: the adapters open another
 * for the next call (pg: a connection that failed is released with the error and so destroyed;
 * ioredis and mongodb reconnect). The call that used it fails through its own promise, as
 * could-not-ask or an apply retried. No holdfast code runs in that stack but listeners, so no
 * record, job, lock or queue state of holdfast's is left half-changed. A TypeError, a
 * RangeError, a store or queue error, or any error of another kind may come from holdfast's own
 * code midway through a change: then the process exits, as before.
 */
import { MongoNetworkError } from 'mongodb';
import pg from 'pg';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';

/** Error codes of a socket that lost its peer (Node system errors, raised by `net` and `tls`). */
const SOCKET_CODES: readonly string[] = [
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTCONN',
];

/**
 * SQLSTATEs a PostgreSQL server sends as it ends a session: connection exceptions (08…), admin or crash shutdown,
 * cannot connect now.
 */
function isSessionEnded(state: string): boolean {
  return state.startsWith('08') || ['57P01', '57P02', '57P03'].includes(state);
}

/**
 * Whether `error` says only that a connection to a backend was lost, by its type: a socket's
 * system error, a MongoDB network error, or a PostgreSQL server's message that it ended the
 * session. Never by its message.
 */
export function isConnectionFault(error: unknown): boolean {
  if (error instanceof MongoNetworkError) return true;
  if (error instanceof pg.DatabaseError) return typeof error.code === 'string' && isSessionEnded(error.code);
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as NodeJS.ErrnoException;
  return typeof syscall === 'string' && typeof code === 'string' && SOCKET_CODES.includes(code);
}

/** What the guard needs of the process (the real one in `holdfast run`; a stand-in in tests). */
export interface GuardedProcess {
  on(event: 'uncaughtException', listener: (error: unknown) => void): unknown;
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  off(event: 'uncaughtException', listener: (error: unknown) => void): unknown;
  off(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  exit(code: number): never;
}

export interface ConnectionFaultGuardOptions {
  logger: Logger;
  scrubber: Scrubber;
  /** Counts a fault survived (the metric), when the process keeps metrics. */
  count?: (kind: 'uncaught-exception' | 'unhandled-rejection') => void;
  process?: GuardedProcess;
}

/** Installs the guard; the function returned removes it. */
export function guardConnectionFaults(options: ConnectionFaultGuardOptions): () => void {
  const proc = options.process ?? process;
  const handle = (kind: 'uncaught-exception' | 'unhandled-rejection') => (error: unknown) => {
    const err = options.scrubber.describe(error);
    if (isConnectionFault(error)) {
      options.count?.(kind);
      options.logger.error(
        { err, kind },
        `a backend connection was lost where nothing listened (${kind}); the calls that used it failed, the process goes on: ${err}`,
      );
      return;
    }
    options.logger.fatal({ err, kind }, `unexpected error (${kind}); exiting: ${err}`);
    proc.exit(1);
  };
  const onException = handle('uncaught-exception');
  const onRejection = handle('unhandled-rejection');
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return () => {
    proc.off('uncaughtException', onException);
    proc.off('unhandledRejection', onRejection);
  };
}

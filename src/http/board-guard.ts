/**
 * What the dashboard may change, whatever `http.readOnly` says: a list of what is allowed, not of
 * what is refused, so that a route a newer Bull Board adds is refused until it is judged here.
 *
 * Allowed (with `readOnly: false`): retrying, promoting or removing one job as holdfast wrote it
 * (the sweep re-creates a removed consumer's wait), and resuming a queue or releasing its active
 * rate limit (what undoes a stop). Refused, with 403 and a JSON body naming why: everything else
 * that is not a read; in @bull-board/api 9.10.1 (`dist/routes.js`) that is pausing one queue or all,
 * setting a global concurrency or rate limit, cleaning, emptying or obliterating a queue, retrying
 * or promoting every job at once, adding a job (and Duplicate, the UI's retry with edited data),
 * changing a job's data, delay or priority, removing a job's children, and removing, changing or
 * running a job scheduler (the rounds' tick). The dashboard cannot stop the work, slow it, or
 * change what a job carries; holdfast undoes what a writer of the queue's Redis does of the kind
 * (`src/queue/queue-controls.ts`).
 */
import type { ErrorCode } from '../errors/holdfast-error.js';

/** Where the board is mounted. */
export const BOARD_PREFIX = '/queues';

/** A write the board may make: the method and the route pattern as Bull Board declares it (under its mount). */
export interface BoardWrite {
  method: string;
  route: string;
}

/** Bull Board's writes holdfast allows, as @bull-board/api 9.10.1 declares them (`appRoutes.api`). */
export const ALLOWED_BOARD_WRITES: readonly BoardWrite[] = [
  { method: 'PUT', route: '/api/queues/:queueName/:jobId/retry' },
  { method: 'PUT', route: '/api/queues/:queueName/:jobId/promote' },
  { method: 'PUT', route: '/api/queues/:queueName/:jobId/clean' },
  { method: 'PUT', route: '/api/queues/:queueName/resume' },
  { method: 'PUT', route: '/api/queues/resume' },
  { method: 'PUT', route: '/api/queues/:queueName/rate-limit/release' },
];

/** Methods that only read. */
const READS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

const allowed: ReadonlySet<string> = new Set(ALLOWED_BOARD_WRITES.map((w) => `${w.method} ${BOARD_PREFIX}${w.route}`));

/** The 403 body of a refused write. */
export interface RefusedWrite {
  error: { code: Extract<ErrorCode, 'DASHBOARD_ACTION_REFUSED'>; message: string };
}

/**
 * Why the request `method` to `route` (the route pattern fastify matched, e.g.
 * `/queues/api/queues/:queueName/pause`, so no spelling of the URL slips past; undefined when
 * none matched) is refused, or undefined when it only reads or is one of
 * {@link ALLOWED_BOARD_WRITES}.
 */
export function refusedWrite(method: string, route: string | undefined): RefusedWrite | undefined {
  const verb = method.toUpperCase();
  if (READS.has(verb) || allowed.has(`${verb} ${route ?? ''}`)) return undefined;
  return {
    error: {
      code: 'DASHBOARD_ACTION_REFUSED',
      message:
        `refused: ${verb} ${route ?? '(no such route)'} would change holdfast's queues; the dashboard may only retry, ` +
        'promote or remove one job, and resume a queue or release its rate limit. Pausing, limiting, emptying or ' +
        'cleaning a queue, and adding or changing a job, are never allowed: to stop holdfast, stop its processes',
    },
  };
}

/**
 * Bull Board's actions that write a job's data, refused whatever `http.readOnly` says: job data
 * is holdfast's to write (a desired job names a login, its rights and its secret's path). The
 * routes are @bull-board/api 9.10.1's (`dist/routes.js`): `POST …/add` (Add job, and Duplicate,
 * the UI's retry with edited data) and `PATCH …/:jobId/update-data` (Update data). Retrying,
 * promoting or removing a job as holdfast wrote it stays possible with `readOnly: false`.
 */

/** Where the board is mounted. */
export const BOARD_PREFIX = '/queues';

const REFUSED: ReadonlyArray<{ method: string; route: string; what: string }> = [
  {
    method: 'POST',
    route: `${BOARD_PREFIX}/api/queues/:queueName/add`,
    what: 'add a job (or duplicate one with new data)',
  },
  { method: 'PATCH', route: `${BOARD_PREFIX}/api/queues/:queueName/:jobId/update-data`, what: "replace a job's data" },
];

/**
 * Why the request to `route` (the route pattern fastify matched, e.g.
 * `/queues/api/queues/:queueName/add`, so no spelling of the URL slips past) is refused, or
 * undefined when it is not one of these.
 */
export function refusedBoardAction(method: string, route: string | undefined): string | undefined {
  const hit = REFUSED.find((r) => r.method === method.toUpperCase() && r.route === route);
  return hit && `refused: holdfast's dashboard never lets anyone ${hit.what}; job data is written by holdfast only\n`;
}

import { describe, expect, it } from 'vitest';
import { ALLOWED_BOARD_WRITES, BOARD_PREFIX, refusedWrite } from '../../../src/http/board-guard.js';
import { boardRoutes, boardWrites } from '../../support/bull-board-routes.js';

describe("the dashboard's writes, judged against Bull Board's own route table", () => {
  it('refuses every write Bull Board declares but retry, promote and remove of one job, resume and release', () => {
    const allowed = new Set(ALLOWED_BOARD_WRITES.map((w) => `${w.method} ${w.route}`));
    const writes = boardWrites();
    expect(writes.length).toBeGreaterThan(20);
    for (const { method, route, summary } of writes) {
      const refused = refusedWrite(method, `${BOARD_PREFIX}${route}`);
      if (allowed.has(`${method} ${route}`)) expect(refused, `${method} ${route} (${summary})`).toBeUndefined();
      else {
        expect(refused?.error.code, `${method} ${route} (${summary})`).toBe('DASHBOARD_ACTION_REFUSED');
        expect(refused?.error.message).toContain(`${method} /queues${route}`);
      }
    }
    // what the issue names, by Bull Board's own words
    const refusedSummaries = writes
      .filter((w) => refusedWrite(w.method, `${BOARD_PREFIX}${w.route}`))
      .map((w) => w.summary);
    for (const words of [
      'Pause one queue.',
      'Pause every writable queue on the board.',
      'Set the global concurrency limit of one queue.',
      'Set the rate limit of one queue.',
      'Remove every job from one queue.',
      'Remove every job of one queue in the given status.',
      'Reschedule one delayed job.',
      'Change the priority of one job.',
      'Replace the data of one job.',
      'Add a job to one queue.',
    ])
      expect(refusedSummaries).toContain(words);
    expect(refusedSummaries.some((s) => s.startsWith('Obliterate one queue'))).toBe(true);
  });

  it('allows only writes Bull Board declares (an allowed route renamed by a newer Bull Board is noticed)', () => {
    const declared = new Set(boardRoutes().map((r) => `${r.method} ${r.route}`));
    for (const w of ALLOWED_BOARD_WRITES)
      expect(declared, `${w.method} ${w.route}`).toContain(`${w.method} ${w.route}`);
  });

  it('lets every read through, and refuses a write to a route that does not exist or is spelled otherwise', () => {
    for (const { route } of boardRoutes().filter((r) => r.method === 'GET'))
      for (const verb of ['GET', 'HEAD', 'get'])
        expect(refusedWrite(verb, `${BOARD_PREFIX}${route}`), route).toBeUndefined();
    expect(refusedWrite('PUT', undefined)?.error.code).toBe('DASHBOARD_ACTION_REFUSED');
    expect(refusedWrite('put', '/queues/api/queues/:queueName/:jobId/retry')).toBeUndefined();
    for (const [method, route] of [
      ['POST', '/queues/api/queues/:queueName/:jobId/retry'],
      ['PUT', '/api/queues/:queueName/:jobId/retry'],
      ['PUT', '/queues/api/queues/consumers/1/retry'],
      ['DELETE', '/queues/api/queues/:queueName/:jobId/clean'],
      ['OPTIONS', '/queues/api/queues/resume'],
    ] as const)
      expect(refusedWrite(method, route), `${method} ${route}`).toBeDefined();
  });
});

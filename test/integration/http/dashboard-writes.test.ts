/**
 * The dashboard cannot stop the work, even with `http.readOnly: false`: every write in Bull Board's
 * own route table (read from @bull-board/api, so a route a newer Bull Board adds is covered) but
 * retrying, promoting and removing one job, resuming a queue and releasing its rate limit answers
 * 403 with a JSON body and changes nothing in the queue's Redis (not paused, no limit, every job as
 * it was); the allowed ones still work. On a real Redis, MongoDB wire server and HTTP server, with no
 * worker running, so that nothing but the dashboard could move a job.
 */
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ALLOWED_BOARD_WRITES } from '../../../src/http/board-guard.js';
import type { HttpServer } from '../../../src/http/http-server.js';
import { sharedBackend } from '../../backends/index.js';
import { boardWrites } from '../../support/bull-board-routes.js';
import { engineFixtures } from '../engine/engine-fixture.js';

/** What a refused write would otherwise send, so that it would take effect: by route, as Bull Board declares it. */
const BODIES: Record<string, unknown> = {
  '/api/queues/:queueName/add': { name: 'cache/c0000 desired', data: { key: 'cache/c0000', kind: 'desired' } },
  '/api/queues/:queueName/concurrency': { concurrency: 1 },
  '/api/queues/:queueName/rate-limit': { max: 1, duration: 600_000 },
  '/api/queues/:queueName/obliterate': { force: true },
  '/api/queues/:queueName/job-schedulers/:schedulerId': { every: 3_600_000 },
  '/api/queues/:queueName/:jobId/update-data': { jobData: { key: 'cache/c0000', kind: 'redo', rev: 1 } },
  '/api/queues/:queueName/:jobId/delay': { runAt: Date.now() + 86_400_000 },
  '/api/queues/:queueName/:jobId/priority': { priority: 2_000_000 },
  '/api/metrics/history/purge': {},
};

/** Every key of holdfast's two BullMQ queues under `prefix`, with its whole value: what "changes nothing" means. */
async function queueState(redis: Redis, prefix: string): Promise<Record<string, unknown>> {
  const keys = [...(await redis.keys(`${prefix}:consumers:*`)), ...(await redis.keys(`${prefix}:consumers-rounds:*`))];
  const state: Record<string, unknown> = {};
  for (const key of keys.sort()) {
    const type = await redis.type(key);
    state[key] =
      type === 'hash'
        ? Object.entries(await redis.hgetall(key)).sort()
        : type === 'zset'
          ? await redis.zrange(key, 0, -1, 'WITHSCORES')
          : type === 'list'
            ? await redis.lrange(key, 0, -1)
            : type === 'set'
              ? (await redis.smembers(key)).sort()
              : type === 'stream'
                ? await redis.xrange(key, '-', '+')
                : await redis.get(key);
  }
  return state;
}

describe('the dashboard cannot stop the work', () => {
  const fixture = engineFixtures();
  let server: HttpServer | undefined;
  afterAll(() => server?.close());

  it('refuses every write of Bull Board’s route table but retry, promote, remove, resume and release, changing nothing; those still work', async () => {
    const f = await fixture({ consumers: 2 });
    // records, the rounds' scheduler; then no worker: nothing but the dashboard moves a job
    await (await f.startHeld()).stop();
    const engine = await f.start({ sync: false, worker: false });
    const [c0, c1] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0]];
    const prefix = f.config.queue.prefix;
    const redis = new Redis(sharedBackend('redis').url);
    const consumers = new Queue('consumers', { connection: redis, prefix, skipMetasUpdate: true });
    const rounds = new Queue('consumers-rounds', { connection: redis, prefix, skipMetasUpdate: true });
    try {
      // a delayed job (a wait handed to the queue), a failed one, a waiting one
      await f.delayedWaitJob(c0.key);
      const [delayed] = await consumers.getJobs(['delayed']);
      await engine.queue.send(c1.key, { type: 'CHECK_NOW' });
      const blocking = new Redis(sharedBackend('redis').url, { maxRetriesPerRequest: null });
      const failing = new Worker(
        'consumers',
        () => Promise.reject(new UnrecoverableError('made to fail by the test')),
        { connection: blocking, prefix },
      );
      await f.until('a job failed', async () => (await consumers.getJobCounts('failed')).failed === 1);
      await failing.close();
      blocking.disconnect();
      const [failed] = await consumers.getJobs(['failed']);
      await engine.queue.send(c0.key, { type: 'CHECK_NOW' });
      const [waiting] = await consumers.getJobs(['wait']);
      expect([delayed?.id, failed?.id, waiting?.id].every((id) => id !== undefined)).toBe(true);
      expect(await rounds.getJobScheduler('rounds')).toBeDefined();

      server = await f.httpServer(engine, undefined, { readOnly: false });
      const url = `${server.url}/queues`;
      const path = (route: string, jobId = delayed!.id!) =>
        route
          .replace(':queueName', route.includes('job-schedulers') ? 'consumers-rounds' : 'consumers')
          .replace(':schedulerId', 'rounds')
          .replace(':jobId', encodeURIComponent(jobId))
          .replace(':queueStatus', 'failed');
      const request = (method: string, route: string, jobId?: string) =>
        fetch(`${url}${path(route, jobId)}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(BODIES[route] ?? {}),
        });

      const allowed = new Set(ALLOWED_BOARD_WRITES.map((w) => `${w.method} ${w.route}`));
      const refused = boardWrites().filter((w) => !allowed.has(`${w.method} ${w.route}`));
      expect(refused.map((w) => w.summary)).toEqual(
        expect.arrayContaining(['Pause every writable queue on the board.', 'Pause one queue.']),
      );
      const start = await queueState(redis, prefix);
      let before = start;
      const servedOtherwise: string[] = [];
      const changed: string[] = [];
      for (const { method, route, summary } of refused) {
        const answer = await request(method, route);
        const body = (await answer.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
        if (answer.status !== 403 || body?.error?.code !== 'DASHBOARD_ACTION_REFUSED')
          servedOtherwise.push(`${method} ${route} (${summary}): ${answer.status} ${JSON.stringify(body)}`);
        else expect(body.error.message).toContain('to stop holdfast, stop its processes');
        // each judged on its own: what one changed is not laid at the next one's door
        const after = await queueState(redis, prefix);
        if (JSON.stringify(after) !== JSON.stringify(before)) changed.push(`${method} ${route} (${summary})`);
        before = after;
      }
      expect(servedOtherwise).toEqual([]);
      expect(changed).toEqual([]);
      expect(await queueState(redis, prefix)).toEqual(start);
      // as a person would check it
      for (const queue of [consumers, rounds]) {
        expect(await queue.isPaused(), queue.name).toBe(false);
        expect(await queue.getGlobalRateLimit(), queue.name).toBeNull();
        expect(await queue.getGlobalConcurrency(), queue.name).toBeNull();
      }
      expect((await rounds.getJobScheduler('rounds'))?.every).toBe(1_000);
      expect((await consumers.getJob(delayed!.id!))?.data).toEqual(delayed!.data);

      // the allowed: retry one job, promote one, remove one, resume, release
      const put = (route: string, jobId?: string) => request('PUT', route, jobId).then((a) => a.status);
      expect(await put('/api/queues/:queueName/:jobId/retry', failed?.id)).toBe(204);
      expect(await consumers.getJobState(failed!.id!)).toBe('waiting');
      expect(await put('/api/queues/:queueName/:jobId/promote', delayed?.id)).toBe(204);
      expect(await consumers.getJobState(delayed!.id!)).toBe('waiting');
      expect(await put('/api/queues/:queueName/:jobId/clean', waiting?.id)).toBe(204);
      expect(await consumers.getJob(waiting!.id!)).toBeUndefined();
      expect(await put('/api/queues/:queueName/resume')).toBe(200);
      expect(await put('/api/queues/resume')).toBe(200);
      expect(await put('/api/queues/:queueName/rate-limit/release')).toBe(200);
    } finally {
      await consumers.close();
      await rounds.close();
      redis.disconnect();
    }
  }, 120_000);
});

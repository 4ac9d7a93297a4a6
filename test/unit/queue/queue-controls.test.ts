/**
 * What stops or throttles holdfast's queues, read from BullMQ's own meta key of each of its queues,
 * and undone with a line that says so (repeats counted, said once a minute).
 */
import { Writable } from 'node:stream';
import { QueueKeys } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { createLogger } from '../../../src/logging/logger.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import {
  controlLine,
  controlsIn,
  holdfastQueueMetas,
  QueueControls,
  type QueueControl,
  type UndoableQueue,
} from '../../../src/queue/queue-controls.js';
import { roundQueueName } from '../../../src/schedule/round-jobs.js';

describe('the controls of holdfast’s queues', () => {
  it.each([1, 3])(
    'are read from BullMQ’s meta key of the consumers’ and the rounds’ queue in each of %i shard(s)',
    (shards) => {
      const metas = holdfastQueueMetas('hf', 'consumers', shards);
      expect(metas.map((m) => m.meta)).toEqual(
        shardPrefixes('hf', shards).flatMap((prefix) => {
          const bull = new QueueKeys(prefix);
          return ['consumers', roundQueueName('consumers')].map((name) => bull.toKey(name, 'meta'));
        }),
      );
      expect(metas[1]!.queue).toBe(`${shardPrefixes('hf', shards)[0]}:consumers-rounds`);
    },
  );

  it('are what BullMQ reads: a paused field, a max (with its duration), a concurrency; nothing else', () => {
    expect(controlsIn('hf:consumers', [null, null, null, null])).toEqual([]);
    expect(controlsIn('hf:consumers', ['1', '1', '600000', '2']).map((c) => [c.control, c.what])).toEqual([
      ['paused', 'paused: no job of it runs, so no check or heal'],
      ['rateLimit', 'rate-limited to 1 job(s) per 10m'],
      ['concurrency', 'limited to 2 job(s) at once across every worker'],
    ]);
    // what a writer put there that is not a number is not repeated (no terminal control, no megabyte line)
    expect(controlsIn('q', [null, '\u001b[2J', 'x'.repeat(100_000), '1e999'])[0]!.what).toBe(
      'rate-limited to a value that is not a number job(s) per a value that is not a number',
    );
    expect(controlsIn('q', [null, null, null, '-1'])[0]!.what).toBe(
      'limited to a value that is not a number job(s) at once across every worker',
    );
    expect(controlLine(controlsIn('hf:consumers', ['1', null, null, null])[0]!)).toBe(
      "queue hf:consumers is paused: no job of it runs, so no check or heal, set outside holdfast (Bull Board or a writer of the queue's Redis): a running `holdfast run` undoes it within sync.sentinelEvery",
    );
  });

  it('are undone with BullMQ’s own calls, each said with the queue and what was set, repeats counted once a minute', async () => {
    const calls: string[] = [];
    const queue: UndoableQueue = {
      resume: () => Promise.resolve(calls.push('resume')),
      removeGlobalRateLimit: () => Promise.resolve(calls.push('removeGlobalRateLimit')),
      removeRateLimitKey: () => Promise.resolve(calls.push('removeRateLimitKey')),
      removeGlobalConcurrency: () => Promise.resolve(calls.push('removeGlobalConcurrency')),
    };
    const lines: Array<{ msg: string; queue: string; control: string; level: number }> = [];
    const logger = createLogger({
      level: 'info',
      format: 'json',
      scrubber: new Scrubber(),
      destination: new Writable({
        write: (chunk: Buffer, _enc, done) => {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    });
    let set: QueueControl[] = controlsIn('hf:consumers', ['1', '1', '600000', '1']);
    const counted: string[] = [];
    let now = 0;
    const controls = new QueueControls(
      {
        read: { controls: () => Promise.resolve(set) },
        queues: new Map([['hf:consumers', queue]]),
        logger,
        undone: (q, control) => counted.push(`${q} ${control}`),
      },
      () => now,
    );
    expect((await controls.restore()).length).toBe(3);
    expect(calls).toEqual(['resume', 'removeGlobalRateLimit', 'removeRateLimitKey', 'removeGlobalConcurrency']);
    expect(counted).toEqual(['hf:consumers paused', 'hf:consumers rateLimit', 'hf:consumers concurrency']);
    expect(lines.map((l) => [l.level, l.queue, l.control])).toEqual([
      [40, 'hf:consumers', 'paused'],
      [40, 'hf:consumers', 'rateLimit'],
      [40, 'hf:consumers', 'concurrency'],
    ]);
    expect(lines[0]!.msg).toBe(
      "queue hf:consumers was paused: no job of it runs, so no check or heal, set outside holdfast (Bull Board, or a writer of the queue's Redis); holdfast never sets it, and undid it: checks and heals run again. To stop holdfast, stop its processes",
    );

    // paused again and again: each undone and counted, said again a minute after the last line, with the repeats
    set = controlsIn('hf:consumers', ['1', null, null, null]);
    for (now = 5_000; now < 60_000; now += 5_000) await controls.restore();
    expect(counted.filter((c) => c.endsWith('paused'))).toHaveLength(12);
    expect(lines).toHaveLength(3);
    now = 60_000;
    await controls.restore();
    expect(lines).toHaveLength(4);
    expect(lines[3]!.msg).toContain('(undone 11 more time(s) since the last line)');

    // a queue that is not holdfast's is not touched
    set = controlsIn('other:queue', ['1', null, null, null]);
    calls.length = 0;
    expect(await controls.restore()).toEqual([]);
    expect(calls).toEqual([]);
  });
});

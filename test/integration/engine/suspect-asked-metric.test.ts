/**
 * The time from a node event to all its suspects asked, as a histogram (`holdfast_suspect_asked_duration_seconds`):
 * observed once per event, however many workers watched it drain. Two workers (each its own metrics) on one queue's
 * Redis see the same events; the suspects are asked (their set emptied, as the checks' releases do); each event is
 * counted once over both, under its provider and why, its time from the event to the note that all were asked.
 *
 * Fail-without: with the note of all asked replying the event though another worker had noted it already (each worker
 * observing when its own drain ends), both observe it: "expected 2 to be 1".
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { createCoordination, holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { ProviderSuspects } from '../../../workers/provider-suspects.js';
import { sharedBackend } from '../../backends/index.js';
import { until } from '../../support/until.js';

/** The histogram's count and sum for `provider` and `why`, as `/metrics` shows them (0 when absent). */
async function observed(metrics: Metrics, why: string): Promise<{ count: number; sum: number }> {
  const text = await metrics.registry.metrics();
  const value = (part: string) =>
    Number(
      new RegExp(
        `^holdfast_suspect_asked_duration_seconds_${part}\\{provider="cache",why="${why}"\\} (\\S+)$`,
        'm',
      ).exec(text)?.[1] ?? 0,
    );
  return { count: value('count'), sum: value('sum') };
}

describe('the time from a node event to all its suspects asked', () => {
  const clients: Redis[] = [];
  const workers: ProviderSuspects[] = [];
  afterAll(() => {
    for (const w of workers) w.stop();
    for (const c of clients) c.disconnect();
  });

  it('is observed once per event, by one of the workers that watched it drain', async () => {
    const server = sharedBackend('redis');
    const prefix = holdfastPrefix(`{asked-${randomBytes(4).toString('hex')}}`);
    const k = coordinationKeys(prefix);
    const admin = new Redis(server.url);
    clients.push(admin);
    const keys = Array.from({ length: 20 }, (_, i) => `cache/c${i}`);
    // the provider's consumers asked about before, each with its routine wait an hour away
    await admin.zadd(k.checked('cache'), ...keys.flatMap((key, i) => [i, key]));
    await admin.zadd(k.due, ...keys.flatMap((key) => [Date.now() + 3_600_000, key]));
    await admin.hset(k.dueWaits, ...keys.flatMap((key) => [key, JSON.stringify({ wait: 'verify', ticket: {} })]));
    const logger = createLogger({
      level: 'silent',
      format: 'json',
      scrubber: new Scrubber([]),
      destination: { write: () => undefined },
    });
    const metrics = [new Metrics(), new Metrics()];
    const seal = new NoteSeal(randomBytes(32));
    for (const m of metrics) {
      const redis = new Redis(server.url);
      clients.push(redis);
      const coordination = createCoordination(redis, prefix, seal);
      workers.push(
        new ProviderSuspects({ coordination, logger, now: () => new Date(), drainEveryMs: 20, observer: m }),
      );
    }
    const total = async (why: string) => {
      const each = await Promise.all(metrics.map((m) => observed(m, why)));
      return { count: each[0]!.count + each[1]!.count, sum: each[0]!.sum + each[1]!.sum };
    };
    const change = (runId: string) => ({
      node: '127.0.0.1:6379',
      previous: { node: '127.0.0.1:6379', seq: 1, seenAt: new Date().toISOString(), runId: 'a'.repeat(40) },
      current: { node: '127.0.0.1:6379', seq: 2, seenAt: new Date().toISOString(), runId },
      why: 'new-run-id' as const,
      detail: 'run …',
    });

    for (const [n, runId] of [
      [1, 'b'.repeat(40)],
      [2, 'c'.repeat(40)],
    ] as const) {
      // both workers see the event; its consumers are made suspect (by the first to mark them)
      for (const w of workers) w.nodeChanged('cache', change(runId));
      await until(
        'the suspects made',
        async () => ((await admin.scard(k.suspects('cache'))) === keys.length ? true : undefined),
        10_000,
        async () => `suspect: ${await admin.scard(k.suspects('cache'))}`,
      );
      const event = JSON.parse((await admin.get(k.suspectEvent('cache')))!) as { at: string };
      // every one asked (as the releases of their checks remove them), then both drains see none left
      await admin.del(k.suspects('cache'));
      await until(
        `event ${n} noted as all asked`,
        async () => ((await admin.get(k.suspectEvent('cache')))?.includes('"asked"') ? true : undefined),
        10_000,
        async () => String(await admin.get(k.suspectEvent('cache'))),
      );
      const noted = JSON.parse((await admin.get(k.suspectEvent('cache')))!) as { at: string; asked: string };
      expect(noted.at).toBe(event.at);
      // the other worker's drain ends too (it finds the event noted already): still one observation for this event
      await until(
        'both drains ended',
        () => Promise.resolve(workers.every((w) => !w.watching('cache')) ? true : undefined),
        10_000,
        () => Promise.resolve('a drain still watched'),
      );
      const seen = await total('new-run-id');
      expect(seen.count).toBe(n);
      expect(seen.sum).toBeGreaterThanOrEqual(0);
    }
    // the time observed is the event's, from when it was seen to when all were noted asked
    const last = JSON.parse((await admin.get(k.suspectEvent('cache')))!) as { at: string; asked: string };
    expect((await total('new-run-id')).sum).toBeGreaterThanOrEqual(
      (Date.parse(last.asked) - Date.parse(last.at)) / 1000,
    );
  });
});

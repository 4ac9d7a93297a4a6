/**
 * Many first applies at once (a new provider, a cold start), as a person watching them sees them:
 * a progress line every few seconds and the same on the status, not two lines per consumer.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineFixtures, readable, type LogLine } from './engine-fixture.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import type { StatusReport } from '../../../src/status/status-report.js';

const INFO = 30;
const DEBUG = 20;

/** How many applies went to the cache's adapter, in how many batches (`holdfast_backend_batch_size`). */
async function createBatches(metrics: Metrics): Promise<{ sum: number; count: number }> {
  const lines = (await metrics.text()).split('\n').filter((l) => l.includes('call="create"'));
  const value = (suffix: string) =>
    Number(
      lines
        .find((l) => l.startsWith(`holdfast_backend_batch_size_${suffix}{`))
        ?.split(' ')
        .at(-1) ?? 0,
    );
  return { sum: value('sum'), count: value('count') };
}

/** The progress lines said of the provider `cache`. */
const progressLines = (logs: LogLine[]) => logs.filter((l) => l.msg.startsWith('first applies of cache: '));

describe('engine: a few hundred first applies', () => {
  const fixture = engineFixtures();

  it('says their progress (applied of declared, rate, time left) and no line per consumer; the status shows it', async () => {
    const f = await fixture({
      consumers: 300,
      timing: { verifyEvery: '30s', retryBase: '200ms', secretGrace: '60s' },
    });
    // 60 consumers cannot be applied yet (their grant secrets come later): the first applies stay outstanding
    const late = f.consumers.slice(240);
    for (const c of late) rmSync(c.secretPath);
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });

    await f.until(
      'a progress line saying 240 of 300 applied',
      () => progressLines(f.logs).some((l) => l.applied === 240),
      60_000,
    );
    const lines = progressLines(f.logs);
    for (const l of lines) {
      expect(l.level).toBe(INFO);
      expect(l).toMatchObject({ provider: 'cache', declared: 300 });
      expect(l.applied).toBeGreaterThanOrEqual(0);
      expect(l.applied).toBeLessThanOrEqual(240);
      if (l.perSecond !== null) expect(l.perSecond).toBeGreaterThanOrEqual(0);
      if (l.leftS !== null) expect(l.leftS).toBeGreaterThanOrEqual(0);
      expect(l.msg).toMatch(/^first applies of cache: [\d,]+ of 300 declared consumers applied \(\d+\.\d %\)/);
    }
    // the count only grows, and a line is said only when it moved (or first)
    const counts = lines.map((l) => l.applied as number);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(new Set(counts).size).toBe(counts.length);

    // the first applies went to the backend in batches (pipelines), not one call each
    const batched = await createBatches(metrics);
    expect(batched.sum).toBe(240);
    expect(batched.count).toBeLessThan(batched.sum);

    // no consumer says its first apply at info; each says it at debug, and its record keeps it
    const applied = f.consumers.slice(0, 240);
    const firstMoves = (l: LogLine) =>
      (l.from === 'pending' && l.to === 'applying') || (l.from === 'applying' && l.to === 'held');
    expect(f.logs.filter((l) => l.consumer !== undefined && l.level >= INFO && firstMoves(l))).toEqual([]);
    for (const c of applied.slice(0, 5)) {
      expect(f.logsFor(c).filter((l) => l.level === DEBUG && firstMoves(l))).toHaveLength(2);
      const record = readable(await engine.store.get(c.key));
      expect(record?.history.map((h) => `${h.from} → ${h.to}`)).toEqual(['pending → applying', 'applying → held']);
    }

    // the status says the same: the report, `/status` and the page
    const cache = (r: StatusReport) => r.providers.find((p) => p.provider === 'cache');
    expect(cache(await f.status())?.firstApplies).toMatchObject({ applied: 240, declared: 300 });
    const http = await f.httpServer(engine, undefined);
    try {
      const json = (await (await fetch(`${http.url}/status`)).json()) as StatusReport;
      expect(cache(json)?.firstApplies).toMatchObject({ applied: 240, declared: 300 });
      const page = await (await fetch(`${http.url}/`)).text();
      expect(page).toContain('<h2>First applies</h2>');
      expect(page).toContain(
        '<progress value="240" max="300"></progress> cache: 240 of 300 declared consumers applied',
      );
    } finally {
      await http.close();
    }

    // their secrets come: the last first applies end, said once
    for (const c of late) writeFileSync(c.secretPath, `${c.password}\n`, { mode: 0o600 });
    await f.until(
      'the line saying every first apply is done',
      () => f.logs.some((l) => l.msg.startsWith('first applies of cache done: all 300 declared consumers applied')),
      60_000,
    );
    expect(cache(await f.status())?.firstApplies).toBeNull();
  }, 180_000);

  it('counts them over every shard of a sharded queue', async () => {
    const f = await fixture({ consumers: 60, shards: 3, timing: { verifyEvery: '30s', secretGrace: '60s' } });
    for (const c of f.consumers.slice(40)) rmSync(c.secretPath);
    await f.start();
    await f.until(
      'a progress line saying 40 of 60 applied',
      () => progressLines(f.logs).some((l) => l.applied === 40),
      45_000,
    );
    const cache = (await f.status()).providers.find((p) => p.provider === 'cache');
    expect(cache?.firstApplies).toMatchObject({ applied: 40, declared: 60 });
  }, 120_000);
});

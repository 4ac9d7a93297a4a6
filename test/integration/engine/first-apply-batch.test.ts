/**
 * First applies go to the backend in batches (a pipeline of `ACL SETUSER`s per node); one entry's
 * fault is that entry's: a consumer whose apply the server refuses (its rules name a command this
 * Redis does not have, which the provider's policy allows) is not applied and says why, and every
 * other consumer of its batches is held.
 */
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { engineFixtures, readable } from './engine-fixture.js';

const RULES = ['+@read', '+@write', '+@connection'];

/** How many applies went to the cache's adapter, in how many batches (`holdfast_backend_batch_size`). */
async function createBatches(metrics: Metrics): Promise<{ sum: number; count: number }> {
  const lines = (await metrics.text()).split('\n').filter((l) => l.includes('call="create"'));
  const value = (suffix: string) =>
    Number(lines.find((l) => l.startsWith(`holdfast_backend_batch_size_${suffix}{`))?.split(' ')[1] ?? 0);
  return { sum: value('sum'), count: value('count') };
}

describe('engine: a fault of one entry in a batch of first applies', () => {
  const fixture = engineFixtures();

  it('leaves the others held and names the consumer whose apply failed, and why', async () => {
    const f = await fixture({
      consumers: 40,
      concurrency: 64,
      timing: { verifyEvery: '30s', retryBase: '2s' },
      policy: `{ keyPrefix: "{id}:", allowedCommands: ${JSON.stringify([...RULES, '+nosuchcommand'])} }`,
    });
    const victim = f.consumers[17]!;
    const others = f.consumers.filter((c) => c !== victim);
    f.writeContributions(f.consumers, undefined, (c) => (c === victim ? ['+@read', '+nosuchcommand'] : RULES));
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });

    const stateOf = async () => new Map((await f.status()).consumers.map((c) => [c.consumer, c]));
    await f.until(
      'every other consumer held, and the one refused by the server retrying',
      async () => {
        const states = await stateOf();
        return others.every((c) => states.get(c.key)?.state === 'held') && states.get(victim.key)?.state === 'retrying';
      },
      60_000,
    );
    for (const c of others) expect(await f.canLogin(c)).toBe(true);
    expect(await f.canLogin(victim)).toBe(false);

    // the first applies went in batches, the victim's among them
    const batched = await createBatches(metrics);
    expect(batched.sum).toBeGreaterThanOrEqual(f.consumers.length);
    expect(batched.count).toBeLessThan(batched.sum);

    // its error named, as the server said it: in the status, in its record and in its log
    const mine = (await stateOf()).get(victim.key)!;
    expect(mine.healthy).toBe(false);
    expect(mine.reason).toMatch(/nosuchcommand/i);
    const record = readable(await engine.store.get(victim.key))!;
    expect(record.history.map((h) => `${h.from} → ${h.to}`).slice(0, 2)).toEqual([
      'pending → applying',
      'applying → retrying',
    ]);
    expect(record.history[1]!.reason).toMatch(/nosuchcommand/i);
    expect(f.logsFor(victim).some((l) => l.level >= 40 && /nosuchcommand/i.test(l.msg))).toBe(true);
    // every other consumer was held by its first apply, not by a retry, and its log says nothing of the victim's fault
    for (const c of others) {
      const theirs = readable(await engine.store.get(c.key))!;
      expect(theirs.history.map((h) => `${h.from} → ${h.to}`).slice(0, 2)).toEqual([
        'pending → applying',
        'applying → held',
      ]);
    }
    for (const c of others) expect(f.logsFor(c).filter((l) => /nosuchcommand/i.test(l.msg))).toEqual([]);
  }, 120_000);
});

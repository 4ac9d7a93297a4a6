/**
 * The status page while a node event's suspects drain, on real servers: the event is noted as a worker notes it on
 * seeing a restart (`markSuspects`, in the queue's Redis), and the suspects are asked as `holdfast check` asks them (a
 * CHECK_NOW each, run by the engine's worker). Every interval is an hour away, so nothing else asks them: the page shows
 * what is left, whatever the machine's speed. The red and the draining count are what an operator reads.
 */
import { describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from '../engine/engine-fixture.js';

const CONSUMERS = 60;

/** The node-event cell's count of suspects left, as the page shows it now (null: none shown). */
function suspectsShown(page: string): number | null {
  const found = /data-node-event="suspect" data-suspects="(\d+)"/.exec(page);
  return found ? Number(found[1]) : null;
}

describe('the status page while a node event’s suspects are asked', () => {
  const fixture = engineFixtures();

  it('is red with the event and the suspects left, lists them linked, drains, then is green with the event kept', async () => {
    const f = await fixture({ consumers: CONSUMERS, timing: { verifyEvery: '1h', checkTimeout: '2s' } });
    const engine = await f.startHeld();
    await f.until('status healthy', async () => (await f.status()).healthy);
    const http = await f.httpServer(engine, undefined);
    const page = async () => (await fetch(`${http.url}/`)).text();
    try {
      expect(await page()).toContain('id="verdict">Every consumer served');
      const node = sharedBackend('redis').host + ':' + sharedBackend('redis').port;
      const at = new Date();
      const time = at.toISOString().slice(11, 19);
      // as a worker notes it on seeing the cache's new run id
      const suspects = (
        await engine.coordination.signals.markSuspects('cache', { node, why: 'new-run-id', at: at.toISOString() })
      ).sort();
      expect(suspects).toEqual(f.consumers.map((c) => c.key));
      // the page reads a few of them, never the whole set
      const few = await engine.coordination.signals.suspectSample('cache', 50);
      expect(new Set(few).size).toBe(50);
      expect(few.every((key) => suspects.includes(key))).toBe(true);

      // (a report finished a moment ago is shared by the requests right after it: the next one reads anew)
      let red = '';
      await f.until('the page to be red', async () => (red = await page()).includes('id="verdict">NOT SERVED'));
      expect(red).toContain(
        `<span class="mark">node ${node} restarted at ${time} (new run id)</span>: <progress value="0" max="${CONSUMERS}"></progress> ${CONSUMERS} of ${CONSUMERS} not asked since`,
      );
      const listed = /<p data-list="suspect">.*?<\/p>/.exec(red)?.[0] ?? '';
      expect(listed).toContain(`${CONSUMERS} suspect</span>, not asked since node ${node} restarted at ${time}`);
      expect(listed.match(/<a href="\/consumer\?key=cache%2Fc\d{4}">cache\/c\d{4}<\/a>/g)).toHaveLength(50);
      expect(listed).toContain(`and ${CONSUMERS - 50} more`);
      expect(red).toMatch(/<g data-kind="node-event" data-at="\d+"><title>cache: node /);
      const healthz = await fetch(`${http.url}/healthz`);
      expect(healthz.status).toBe(503);
      expect(await healthz.text()).toContain(
        `provider cache: node ${node} restarted at ${time} (new run id): ${CONSUMERS} of ${CONSUMERS} consumers not asked since`,
      );

      // 20 asked, as `holdfast check` asks: 40 left, all named, none of those asked
      const asked = f.consumers.slice(0, 20);
      for (const c of asked) await engine.queue.send(c.key, { type: 'CHECK_NOW' });
      await f.until('the page to show 40 suspects left', async () => suspectsShown(await page()) === 40, 30_000);
      const draining = await page();
      expect(draining).toContain(
        `<progress value="20" max="${CONSUMERS}"></progress> 40 of ${CONSUMERS} not asked since`,
      );
      const left = /<p data-list="suspect">.*?<\/p>/.exec(draining)?.[0] ?? '';
      expect(left.match(/<a href=/g)).toHaveLength(40);
      expect(left).not.toContain('more');
      for (const c of asked) expect(left).not.toContain(`>${c.key}<`);

      // the rest asked: green, the event still on the row and the timeline
      for (const c of f.consumers.slice(20)) await engine.queue.send(c.key, { type: 'CHECK_NOW' });
      await f.until('/healthz to answer 200', async () => (await fetch(`${http.url}/healthz`)).status === 200, 30_000);
      const green = await page();
      expect(green).toContain('id="verdict">Every consumer served');
      expect(green).toContain(`<span data-node-event="asked">node ${node} restarted at ${time} (new run id), `);
      expect(green).toContain(`: all ${CONSUMERS} asked since</span>`);
      expect(green).not.toContain('data-list="suspect"');
      expect(green).toContain('data-kind="node-event"');
    } finally {
      await http.close();
    }
  }, 120_000);
});

/**
 * The status page while a node event's suspects drain, on real servers: the event is noted as a worker notes it on
 * seeing a restart (`markSuspects`, in the queue's Redis) while only the sync runs, so nothing asks them and every
 * interval is an hour away: the page shows all of them left, whatever the machine's speed. Then a worker starts, asks
 * them at once, and the page is green with the event kept. The red, the count and the links are what an operator reads.
 */
import { describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from '../engine/engine-fixture.js';

const CONSUMERS = 60;

describe('the status page while a node event’s suspects are asked', () => {
  const fixture = engineFixtures();

  it('is red with the event and the suspects left, lists them linked, drains, then is green with the event kept', async () => {
    const f = await fixture({ consumers: CONSUMERS, timing: { verifyEvery: '1h', checkTimeout: '2s' } });
    await (await f.startHeld()).stop();
    // only the sync runs: nothing asks a suspect until a worker starts
    const engine = await f.start({ sync: true, worker: false });
    const http = await f.httpServer(engine, undefined);
    const page = async () => (await fetch(`${http.url}/`)).text();
    try {
      await f.until('the page green', async () => (await page()).includes('id="verdict">Every consumer served'));
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

      // a worker starts: it asks them at once (their waits were brought forward), and the page drains to green
      await f.start({ sync: false, worker: true });
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

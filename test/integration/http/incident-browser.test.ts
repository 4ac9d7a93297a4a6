/**
 * The dashboard in a real browser (Debian's chromium, through playwright-core) during a real restart of a test's own
 * cache, emptied, with a few hundred consumers at `verifyEvery: 20s` (each checked once before it): `holdfast run` sees the new run id, its
 * consumers become suspect and are asked at once. The page is reloaded as fast as it answers and each red state it
 * shows is kept as a screenshot (the event and the suspects left on the provider's row, the lists to look at, the
 * timeline); how many red reloads it catches depends on the machine, so what is asserted is what stays: the page green
 * again, the event on the provider's row with all its consumers asked since, marked on the timeline, and no
 * Content-Security-Policy violation. Screenshots (the top of each page) go to test-results/incident/.
 *
 * Skipped before, a defect of issue 42: the restart was said late (the node's run read only after a ping, up to a
 * second after the connection was made again, while the checks on it found the logins gone: a loss wave, then
 * "restarted …: asking its 3 consumers"), or not as a restart (pings read late under load taken as the node not
 * answering: `answers-again` events asking every consumer, the restart's asking none). Both fixed in
 * src/adapters/redis-acl/redis-nodes.ts (test/integration/adapters/incarnations.test.ts).
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { BrowserDashboard, until } from '../../support/browser-dashboard.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { engineFixtures } from '../engine/engine-fixture.js';

const ROOT = join(import.meta.dirname, '../../..');
const SHOTS = join(ROOT, 'test-results/incident');
const CONSUMERS = 250;
/** Red reloads kept as screenshots, at most. */
const RED_SHOTS = 4;

/** Loads `url`, again if the page's own refresh interrupted the navigation. */
async function load(page: Page, url: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await page.goto(url);
      return;
    } catch (error) {
      if (tries >= 3) throw error;
    }
  }
}

describe('the dashboard in a browser during a cache restart', () => {
  const fixture = engineFixtures();
  let dashboard: BrowserDashboard | undefined;
  afterAll(() => dashboard?.stop());

  it('shows the restart and its suspects draining, then green with the event kept', async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: CONSUMERS, timing: { verifyEvery: '20s', checkTimeout: '1s' } });
    dashboard = await BrowserDashboard.start(join(f.dir, 'holdfast.yaml'));
    const { url } = dashboard;
    const { page, violations } = await dashboard.page({ viewport: { width: 1280, height: 1100 } });
    await load(page, url);
    await expect(page.locator('#verdict').textContent()).resolves.toContain('Every consumer served');
    await page.screenshot({ path: join(SHOTS, '1-held.png') });
    const node = new URL(provider.url).host;
    // a node event makes suspect the consumers asked about before it: each is checked once first
    await until(
      'every consumer checked once',
      async () => {
        const all = (await (await fetch(`${url}/status?all=1`)).json()) as StatusReport;
        return all.consumers.length === CONSUMERS && all.consumers.every((c) => c.lastCheck !== null);
      },
      90_000,
    );

    // the restart is said as soon as holdfast's admin connection is made again (the node's run read first on it), so
    // before any check finds its logins gone: as the restart of all its consumers, not as a loss wave
    const restarted = `cache ${node} restarted (new run id): asking its ${CONSUMERS} consumers now`;
    const said = () =>
      dashboard!.log.split('\n').filter((l) => /restarted|answers again|asked again|new run|lost logins/.test(l));
    await provider.restart({ keepData: false });
    const red: string[] = [];
    let suspectSeen = false;
    // green counts once the restart was seen: the server answers before holdfast's connection is made again, and a page
    // loaded meanwhile is green over the restart holdfast has not seen yet
    await until(
      'the page green again after the restart was said',
      async () => {
        const seen = said().some((l) => l.includes(restarted)); // before the page is read: it shows what was seen
        await load(page, url);
        const green = (await page.locator('#verdict').getAttribute('class'))?.includes('ok') === true;
        if (green) return seen;
        const suspect = (await page.locator('[data-node-event="suspect"]').count()) > 0;
        suspectSeen ||= suspect;
        if (red.length < RED_SHOTS) {
          const shot = join(SHOTS, `2-red-${red.length + 1}${suspect ? '-suspects' : ''}.png`);
          await page.screenshot({ path: shot });
          red.push(shot);
        }
        return false;
      },
      90_000,
    ).catch((error: unknown) => {
      console.log(`[incident-browser] node events said:\n${said().join('\n')}`);
      throw error;
    });
    console.log(`[incident-browser] ${red.length} red reloads kept, suspects on the row in one: ${suspectSeen}`);
    // the page keeps the last event on the provider's row, every consumer asked since
    const row = page.locator('[data-node-event]');
    await expect(row.getAttribute('data-node-event')).resolves.toBe('asked');
    await expect(row.textContent()).resolves.toMatch(
      new RegExp(`^node ${node} (restarted|answers again) at \\d\\d:\\d\\d:\\d\\d `),
    );
    await expect(page.locator('#timelines g[data-kind="node-event"]').count()).resolves.toBe(1);
    await expect(page.locator('#timeline-scale [aria-current]').getAttribute('data-scale')).resolves.toBe('1h');
    await page.screenshot({ path: join(SHOTS, '3-green-again.png') });
    await load(page, `${url}/consumer?key=${encodeURIComponent(f.consumers[0]!.key)}`);
    await page.screenshot({ path: join(SHOTS, '4-consumer.png') });
    for (const shot of ['1-held', '3-green-again', '4-consumer'])
      expect(existsSync(join(SHOTS, `${shot}.png`))).toBe(true);
    const html = await page.content();
    for (const c of f.consumers.slice(0, 20)) expect(html).not.toContain(c.password);
    expect(violations).toEqual([]);
  }, 240_000);
});

/**
 * The status page's timeline in a real browser (Debian's chromium through playwright-core): a
 * running `holdfast run --http` whose cache restarts without an ACL file draws, on the status
 * page, the dip (every consumer not served for a moment) and the heals; a consumer's page draws
 * its own loss and heal on the same axis; the last hour by default (a young run), the 24 h through the page's link, the
 * heals that the hour spreads gathered in fewer marks. No script beyond the page's own, no CSP violation.
 * Screenshots: docs/screenshots/status-timeline.png (the last hour), status-timeline-24h.png and consumer-timeline.png.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { BrowserDashboard, until } from '../../support/browser-dashboard.js';
import { engineFixtures } from '../engine/engine-fixture.js';

const ROOT = join(import.meta.dirname, '../../..');
const SHOTS = join(ROOT, 'docs/screenshots');

/** The sum of the `data-count` of the marks of `kind` in `svg`, after a fresh load. */
async function marks(page: Page, svg: string, kind: string): Promise<number> {
  await page.reload();
  return (await numbers(page, `${svg} g[data-kind="${kind}"]`, 'data-count')).reduce((a, b) => a + b, 0);
}

/** The attribute `name` of every element `selector` finds, as numbers. */
async function numbers(page: Page, selector: string, name: string): Promise<number[]> {
  return Promise.all(
    (await page.locator(selector).all()).map(async (element) => Number(await element.getAttribute(name))),
  );
}

describe('the timeline in a browser', () => {
  const fixture = engineFixtures();
  let dashboard: BrowserDashboard | undefined;
  afterAll(() => dashboard?.stop());

  it("shows the dip and the heal after a cache restart, on the status page and on a consumer's page", async () => {
    mkdirSync(SHOTS, { recursive: true });
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 6, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    dashboard = await BrowserDashboard.start(join(f.dir, 'holdfast.yaml'));
    const { url } = dashboard;
    const healthy = () => dashboard!.healthy();
    const { page, violations } = await dashboard.page({ viewport: { width: 1000, height: 700 }, deviceScaleFactor: 2 });
    const picture = 'svg.timeline[data-provider="cache"]';
    await page.goto(url);
    // served since the first applies: no dip, no mark
    expect(await page.locator(`${picture} rect[data-unserved]`).count()).toBe(0);
    expect(await marks(page, picture, 'healed')).toBe(0);

    await provider.restart();
    await until(
      'a heal mark per consumer',
      async () => (await marks(page, picture, 'healed')) === f.consumers.length,
      60_000,
    );
    await until('every consumer served again', healthy);
    await page.reload();
    expect(await marks(page, picture, 'lost')).toBe(f.consumers.length);
    // the dip: a bar of the consumers not served at once (all of them, unless one healed before
    // the last was found lost: checks are spread over the interval)
    const dip = await numbers(page, `${picture} rect[data-unserved]`, 'data-unserved');
    expect(Math.max(...dip)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...dip)).toBeLessThanOrEqual(f.consumers.length);
    await expect(page.locator('#verdict').textContent()).resolves.toContain('Every consumer served');
    await expect(page.locator(picture).getAttribute('data-scale')).resolves.toBe('1h');
    const hourly = await page.locator(`${picture} g[data-kind="healed"]`).count();
    await page.screenshot({ path: join(SHOTS, 'status-timeline.png'), fullPage: true });

    // the 24 h, through the page's own link: the same heals, in as many marks or fewer
    await page.click('#timeline-scale a[data-scale="24h"]');
    await expect(page.locator(picture).getAttribute('data-scale')).resolves.toBe('24h');
    expect(new URL(page.url()).search).toBe('?scale=24h');
    expect(await marks(page, picture, 'healed')).toBe(f.consumers.length);
    expect(await page.locator(`${picture} g[data-kind="healed"]`).count()).toBeLessThanOrEqual(hourly);
    await page.screenshot({ path: join(SHOTS, 'status-timeline-24h.png'), fullPage: true });

    const victim = f.consumers[0]!;
    await page.goto(`${url}/consumer?key=${encodeURIComponent(victim.key)}`);
    const own = `svg.timeline[data-consumer="${victim.key}"]`;
    expect(await page.locator(`${own} rect[data-unserved-from]`).count()).toBe(1);
    expect(await marks(page, own, 'lost')).toBe(1);
    expect(await marks(page, own, 'healed')).toBe(1);
    await expect(page.locator(`${own} g[data-kind="healed"] title`).textContent()).resolves.toMatch(
      new RegExp(`${victim.key} healed after [\\d.]+ s`),
    );
    await page.screenshot({ path: join(SHOTS, 'consumer-timeline.png'), fullPage: true });

    const html = await page.content();
    for (const c of f.consumers) expect(html).not.toContain(c.password);
    expect(violations).toEqual([]);
  }, 180_000);
});

/**
 * The dashboard in a real browser (Debian's chromium, driven by playwright-core; no browser is
 * downloaded): a running `holdfast run --http` shows every consumer held; a login deleted by
 * hand on the backend (its grant secret gone too, so that it stays unserved long enough to
 * see) turns its row unserved, and it is held again once the secret is back; its page shows
 * the transitions; /queues shows holdfast's queue, and the round job that counted the heal. All of it under the
 * server's
 * Content-Security-Policy, with no violation reported. Screenshots go to test-results/dashboard/.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { BrowserDashboard, until } from '../../support/browser-dashboard.js';
import { engineFixtures } from '../engine/engine-fixture.js';

const ROOT = join(import.meta.dirname, '../../..');
const SHOTS = join(ROOT, 'test-results/dashboard');

/** The state shown in the consumer's row, after a fresh load of the page. */
async function rowState(page: Page, key: string): Promise<{ state: string; served: boolean } | null> {
  await page.reload();
  const row = page.locator(`tr[data-consumer="${key}"]`);
  if ((await row.count()) === 0) return null;
  return {
    state: (await row.getAttribute('data-state')) ?? '',
    served: (await row.getAttribute('class')) === 'served',
  };
}

interface BoardRound {
  id: string;
  returnValue: { shard: number; due: number; checked: number; held: number; lost: number; healed: number };
}

/** The latest completed round job whose result counts a heal, as Bull Board's API lists it. */
async function healedRound(url: string): Promise<BoardRound> {
  let found: BoardRound | undefined;
  await until('a round job counts the heal', async () => {
    const listed = (await (
      await fetch(`${url}/queues/api/queues?activeQueue=consumers-rounds&status=completed&page=1&jobsPerPage=100`)
    ).json()) as { queues: Array<{ name: string; jobs: BoardRound[] }> };
    found = listed.queues
      .find((q) => q.name === 'consumers-rounds')
      ?.jobs.find((j) => (j.returnValue?.healed ?? 0) > 0);
    return found !== undefined;
  });
  return found!;
}

describe('the dashboard in a browser', () => {
  const fixture = engineFixtures();
  let dashboard: BrowserDashboard | undefined;
  afterAll(() => dashboard?.stop());

  it("shows a consumer go from held to not served and back, its transitions, and holdfast's queue", async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    const f = await fixture({ consumers: 3, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    dashboard = await BrowserDashboard.start(join(f.dir, 'holdfast.yaml'));
    const { url } = dashboard;
    expect(dashboard.log).toContain(`dashboard at ${url}/`);

    const { page, violations } = await dashboard.page({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    await expect(page.locator('#verdict').textContent()).resolves.toContain('Every consumer served');
    const victim = f.consumers[1]!;
    expect(await rowState(page, victim.key)).toEqual({ state: 'held', served: true });
    await page.screenshot({ path: join(SHOTS, '1-held.png'), fullPage: true });
    // the filter submits itself when a choice changes (the page's one script, allowed by its hash)
    await Promise.all([page.waitForURL(/[?&]state=held/), page.selectOption('select[name="state"]', 'held')]);
    expect(await page.locator('tr[data-consumer]').count()).toBe(3);

    // by hand on the backend: the login deleted; the next check finds it lost and applies it again at once
    const admin = new Redis(sharedBackend('redis').url);
    await admin.call('ACL', 'DELUSER', victim.login);
    const consumerPage = `${url}/consumer?key=${encodeURIComponent(victim.key)}`;
    await page.goto(consumerPage);
    // newest first: held again above lost (a reload between the two shows lost alone, above the first apply's held)
    const healedAboveLost = (history: string) =>
      history.includes('held → lost') && history.indexOf('→ held') < history.indexOf('held → lost');
    await until('its page shows it lost and held again', async () => {
      await page.reload();
      return healedAboveLost((await page.locator('#history').textContent()) ?? '');
    });
    const history = (await page.locator('#history').textContent()) ?? '';
    expect(history.indexOf('→ held')).toBeLessThan(history.indexOf('held → lost'));
    await page.screenshot({ path: join(SHOTS, '2-lost-and-healed.png'), fullPage: true });

    // Bull Board shows the heal: a round job whose result counts the consumer found lost and healed
    const round = await healedRound(url);
    expect(round.returnValue).toMatchObject({ shard: 0, lost: 1, healed: 1 });
    expect(round.returnValue.checked).toBeGreaterThanOrEqual(1);
    await page.goto(`${url}/queues/queue/consumers-rounds/${encodeURIComponent(round.id)}`);
    await page.getByText('returnValue:').first().waitFor({ timeout: 30_000 });
    await page.getByText('healed:').first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, '8-round-healed.png'), fullPage: true });

    // again, with its grant secret taken away too, so that it stays unserved long enough to watch
    rmSync(victim.secretPath);
    await admin.call('ACL', 'DELUSER', victim.login);
    admin.disconnect();
    await page.goto(url);
    await until('the row unserved', async () => (await rowState(page, victim.key))?.served === false);
    expect((await rowState(page, victim.key))?.state).not.toBe('held');
    await expect(page.locator('#verdict').textContent()).resolves.toContain('NOT SERVED');
    await expect(page.locator(`tr[data-consumer="${victim.key}"]`).textContent()).resolves.toContain('✗');
    await page.screenshot({ path: join(SHOTS, '3-not-served.png'), fullPage: true });

    writeFileSync(victim.secretPath, `${victim.password}\n`, { mode: 0o600 });
    await until(
      'the row held again',
      async () => JSON.stringify(await rowState(page, victim.key)) === JSON.stringify({ state: 'held', served: true }),
    );
    // the verdict follows once nothing else keeps it red: the two losses by hand may be a loss wave, whose suspects
    // (the other consumers) are asked at once and may still be asked as the row turns held
    await until('the verdict green', async () => {
      await page.reload();
      return ((await page.locator('#verdict').textContent()) ?? '').includes('Every consumer served');
    });
    await page.screenshot({ path: join(SHOTS, '4-held-again.png'), fullPage: true });

    await f.delayedWaitJob(f.consumers[0]!.key); // routine waits are in the due set: a job handed to the queue, for the board to list
    await page.goto(`${url}/queues`);
    await page
      .getByText(/^\d+ Jobs?$/)
      .first()
      .waitFor({ timeout: 30_000 }); // the queue's card, from the board's API
    await page.screenshot({ path: join(SHOTS, '5-queues.png'), fullPage: true });
    await page.goto(`${url}/queues/queue/consumers?status=delayed`);
    await page.getByText(`${f.consumers[0]!.key} wait verify`).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, '6-queue-jobs.png'), fullPage: true });
    const listed = (await (
      await fetch(`${url}/queues/api/queues?activeQueue=consumers&status=delayed&page=1&jobsPerPage=50`)
    ).json()) as { queues: Array<{ name: string; jobs: Array<{ id: string; name: string }> }> };
    const job = listed.queues.find((q) => q.name === 'consumers')!.jobs.find((j) => j.name.endsWith('wait verify'))!;
    await page.goto(`${url}/queues/queue/consumers/${encodeURIComponent(job.id)}`);
    await page.getByText(job.name).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, '7-job.png'), fullPage: true });
    const html = await page.content();
    for (const c of f.consumers) expect(html).not.toContain(c.password);
    for (const shot of [
      '1-held',
      '2-lost-and-healed',
      '3-not-served',
      '4-held-again',
      '5-queues',
      '6-queue-jobs',
      '7-job',
      '8-round-healed',
    ])
      expect(existsSync(join(SHOTS, `${shot}.png`))).toBe(true);
    expect(violations).toEqual([]);
  }, 180_000);
});

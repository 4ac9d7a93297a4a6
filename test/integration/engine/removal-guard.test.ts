/**
 * The mass-removal guard: a file that lost most of its consumers removes nothing until a person confirms exactly that
 * change.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineFixtures, type Consumer } from './engine-fixture.js';

const MAIN = join(import.meta.dirname, '../../../src/cli/main.ts');

function holdfast(args: string[]): { code: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], { encoding: 'utf8' });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the mass-removal guard', () => {
  const fixture = engineFixtures();

  it('holds back a cut file, judges an edited one afresh, and removes exactly the confirmed change', async () => {
    const f = await fixture({ consumers: 50, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    const file = join(f.dir, 'contributions/cache.yaml');
    const config = join(f.dir, 'holdfast.yaml');
    await f.startHeld();
    const full = readFileSync(file, 'utf8').split('\n');
    // cut at a line boundary: the header and the first 20 consumers (4 lines each) are left, and it still parses
    const cut = () => writeFileSync(file, `${full.slice(0, 1 + 20 * 4).join('\n')}\n`);
    const loginsOf = async (cs: readonly Consumer[]) => Promise.all(cs.map((c) => f.canLogin(c)));
    const kept = f.consumers.slice(0, 20);
    const cutOff = f.consumers.slice(20);

    cut();
    await f.until(
      'status names the held-back change',
      async () => (await f.status()).providers[0]!.problems.length > 0,
      10_000,
    );
    const status = await f.status();
    expect(status.healthy).toBe(false);
    expect(status.providers[0]!.problems[0]).toContain(`30 would be removed (of 50) by ${file}`);
    expect(status.providers[0]!.problems[0]).toContain('holdfast confirm-removals cache');
    const shown = holdfast(['status', '-c', config]);
    expect(shown.code).toBe(1);
    expect(shown.output).toContain('30 would be removed');
    await new Promise((r) => setTimeout(r, 1500)); // several sync passes
    expect(await loginsOf(f.consumers)).toEqual(f.consumers.map(() => true));
    expect((await f.status()).consumers).toHaveLength(50);
    expect(f.logs.filter((l) => l.msg.startsWith('removals held back'))).toHaveLength(1);
    expect(f.logs.some((l) => l.msg === 'no longer declared; removing')).toBe(false);

    // confirmed: exactly those 30 are removed
    const confirmed = holdfast(['confirm-removals', 'cache', '-c', config]);
    expect(confirmed.output).toContain('confirmed: 30 of 50 consumers of cache are to be removed');
    expect(confirmed.code).toBe(0);
    await f.until('the 30 removed', async () => (await f.status()).consumers.length === 20, 15_000);
    await f.until('every remaining consumer held', async () => (await f.status()).healthy, 10_000);
    expect(await loginsOf(kept)).toEqual(kept.map(() => true));
    expect(await loginsOf(cutOff)).toEqual(cutOff.map(() => false));
    expect((await f.status()).providers[0]!.problems).toEqual([]);
    expect(holdfast(['confirm-removals', 'cache', '-c', config]).code).toBe(2); // nothing held back any more

    // removing 5 of 20 (not more than 25%) goes ahead without confirmation
    f.writeContributions(kept.slice(0, 15));
    await f.until('five removed', async () => (await f.status()).consumers.length === 15, 10_000);
    expect(await loginsOf(kept.slice(15))).toEqual([false, false, false, false, false]);
    // nothing held back (a check that missed its deadline on a loaded machine is said until the next one answers)
    await f.until('no problem said', async () => (await f.status()).providers[0]!.problems.length === 0, 10_000);

    // a confirmation names one change: a file edited since is judged afresh, and held back again
    f.writeContributions(kept.slice(0, 5));
    await f.until(
      '10 of 15 held back',
      async () => (await f.status()).providers[0]!.problems.some((p) => p.includes('10 would be removed (of 15)')),
      10_000,
    );
    const heldBefore = (await f.engines[0]!.store.providerStatus('cache'))!.heldRemovals!;
    f.writeContributions(kept.slice(0, 4));
    await f.engines[0]!.coordination.notes.confirmRemovals('cache', {
      change: heldBefore.change,
      since: heldBefore.since.getTime(),
    });
    await f.until(
      '11 of 15 held back',
      async () => (await f.status()).providers[0]!.problems.some((p) => p.includes('11 would be removed (of 15)')),
      10_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect((await f.status()).consumers).toHaveLength(15);
    expect(await loginsOf(kept.slice(0, 15))).toEqual(kept.slice(0, 15).map(() => true));

    // and a file edited to remove few is applied at once
    f.writeContributions(kept.slice(0, 14));
    await f.until(
      'one removed, nothing held back',
      async () => {
        const s = await f.status();
        return s.consumers.length === 14 && s.providers[0]!.problems.length === 0;
      },
      10_000,
    );
  });
});

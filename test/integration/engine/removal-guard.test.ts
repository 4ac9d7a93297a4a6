/**
 * The mass-removal guard: a file that lost most of its consumers removes nothing until a person confirms exactly that
 * change, named by its digest; a confirmation of another change, or one written into the queue's Redis by hand, removes
 * nothing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queueRedis } from '../../../src/queue/bull-connection.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
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
    // cut at a line boundary: the header and the first n consumers (4 lines each) are left, and it still parses
    const cut = (n: number) => writeFileSync(file, `${full.slice(0, 1 + n * 4).join('\n')}\n`);
    const loginsOf = async (cs: readonly Consumer[]) => Promise.all(cs.map((c) => f.canLogin(c)));
    const kept = f.consumers.slice(0, 20);
    const cutOff = f.consumers.slice(20);
    const heldLine = async (removals: number) =>
      (await f.status()).providers[0]!.problems.find((p) => p.includes(`${removals} would be removed (of 50)`));
    const digestIn = (line: string | undefined) => /--change ([0-9a-f]{12})\b/.exec(line ?? '')?.[1];

    // the change a person reviews: 25 of 50
    cut(25);
    await f.until('25 of 50 held back', async () => (await heldLine(25)) !== undefined, 10_000);
    const reviewed = digestIn(await heldLine(25))!;
    expect(reviewed).toMatch(/^[0-9a-f]{12}$/);
    // and the file cut further before they confirm: 30 of 50
    cut(20);
    await f.until('30 of 50 held back', async () => (await heldLine(30)) !== undefined, 10_000);
    const status = await f.status();
    expect(status.healthy).toBe(false);
    expect(status.providers[0]!.problems[0]).toContain(`30 would be removed (of 50) by ${file}`);
    const current = digestIn(status.providers[0]!.problems[0])!;
    expect(current).toMatch(/^[0-9a-f]{12}$/);
    expect(current).not.toBe(reviewed);
    expect(status.providers[0]!.problems[0]).toContain(`holdfast confirm-removals cache --change ${current}`);
    const shown = holdfast(['status', '-c', config]);
    expect(shown.code).toBe(1);
    expect(shown.output).toContain('30 would be removed');
    expect(shown.output).toContain(`--change ${current}`);
    expect(f.logs.filter((l) => l.msg.startsWith('removals held back'))).toHaveLength(2);

    // confirming what was reviewed, not what is held now: refused, saying what is held now; nothing removed
    expect(holdfast(['confirm-removals', 'cache', '-c', config]).code).not.toBe(0); // the change must be named
    const stale = holdfast(['confirm-removals', 'cache', '--change', reviewed, '-c', config]);
    expect(stale.code).toBe(2);
    expect(stale.output).toContain(`nothing confirmed`);
    expect(stale.output).toContain(`held now: change ${current}`);
    expect(stale.output).toContain('30 of 50 consumers of cache would be removed');

    // a writer of the queue's Redis confirms: the held change's digest SET by hand (anyone can compute it); and a
    // confirmation of this change as if given before it was held back
    const redis = queueRedis(f.config.queue.connection, { maxRetriesPerRequest: null });
    const held = (await f.engines[0]!.store.providerStatus('cache'))!.heldRemovals!;
    await redis.set(coordinationKeys(holdfastPrefix(f.config.queue.prefix)).confirmRemovals('cache'), held.change);
    await f.until(
      'the forged confirmation said',
      () => f.logs.some((l) => l.msg.includes('held-back removals that holdfast did not write')),
      10_000,
    );
    redis.disconnect();
    await new Promise((r) => setTimeout(r, 1500)); // several sync passes
    expect(await loginsOf(f.consumers)).toEqual(f.consumers.map(() => true));
    expect(f.logs.some((l) => l.msg.startsWith('removals confirmed by a person'))).toBe(false);
    await f.engines[0]!.coordination.notes.confirmRemovals('cache', {
      change: held.change,
      since: held.since.getTime() - 60_000,
    });
    await new Promise((r) => setTimeout(r, 1500)); // several sync passes
    expect(await loginsOf(f.consumers)).toEqual(f.consumers.map(() => true));
    expect((await f.status()).consumers).toHaveLength(50);
    expect(f.logs.some((l) => l.msg.startsWith('removals confirmed by a person'))).toBe(false);
    expect(f.logs.some((l) => l.msg === 'no longer declared; removing')).toBe(false);

    // confirmed, naming the change held: exactly those 30 are removed
    const confirmed = holdfast(['confirm-removals', 'cache', '--change', current, '-c', config]);
    expect(confirmed.output).toContain(`confirmed: change ${current}`);
    expect(confirmed.output).toContain('30 of 50 consumers of cache to be removed');
    expect(confirmed.code).toBe(0);
    await f.until('the 30 removed', async () => (await f.status()).consumers.length === 20, 15_000);
    await f.until('every remaining consumer held', async () => (await f.status()).healthy, 10_000);
    expect(await loginsOf(kept)).toEqual(kept.map(() => true));
    expect(await loginsOf(cutOff)).toEqual(cutOff.map(() => false));
    expect((await f.status()).providers[0]!.problems).toEqual([]);
    expect(holdfast(['confirm-removals', 'cache', '--change', current, '-c', config]).code).toBe(2); // nothing held back any more

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

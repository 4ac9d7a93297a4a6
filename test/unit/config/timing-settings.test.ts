/**
 * Each timing setting is declared once (src/config/timing.ts); the file's schema, defaults, bounds and documentation
 * follow it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { DEFAULT_TIMING, TIMING_SETTINGS } from '../../../src/config/timing.js';

const fakeKind: AdapterKind<unknown, unknown> = {
  kind: 'fake',
  valuesSchema: z.unknown(),
  policySchema: z.unknown(),
  violations: () => [],
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};
const adapters: ReadonlyMap<string, AdapterKind> = new Map([['fake', fakeKind]]);

const config = (more: string) => `queue:
  url: redis://127.0.0.1:6379
store:
  url: mongodb://127.0.0.1:27017
providers:
  - name: cache
    adapter: fake
    admin:
      url: redis://127.0.0.1:6380
    contributions: contributions/cache.yaml
${more}`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-timing-'));
  mkdirSync(join(dir, 'contributions'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function timingOf(yaml: string) {
  writeFileSync(join(dir, 'holdfast.yaml'), yaml);
  return (await loadConfig(join(dir, 'holdfast.yaml'), { adapters, environment: { stdoutIsTTY: false } })).providers[0]!
    .timing;
}

describe('timing settings', () => {
  it('default to the table, and quarantineAfter to off', async () => {
    const timing = await timingOf(config(''));
    expect(timing).toEqual(DEFAULT_TIMING);
    expect(timing.verifyEveryMs).toBe(60_000);
    expect(timing.quarantineAfterMs).toBeUndefined();
  });

  it('are read by the key the table gives, from defaults or the provider (which wins)', async () => {
    const timing = await timingOf(
      `${config('    quarantineAfter: 2h\n')}defaults: { quarantineAfter: 1d, verifyEvery: 30s }\n`,
    );
    expect(timing).toMatchObject({ quarantineAfterMs: 7_200_000, verifyEveryMs: 30_000 });
  });

  it('take deepCheckBudget as a share in [0, 1], from defaults or the provider', async () => {
    expect(
      (await timingOf(`${config('    deepCheckBudget: 0.05\n')}defaults: { deepCheckBudget: 0 }\n`)).deepCheckBudget,
    ).toBe(0.05);
    expect((await timingOf(`${config('')}defaults: { deepCheckBudget: 0 }\n`)).deepCheckBudget).toBe(0);
    await expect(timingOf(config('    deepCheckBudget: 1.5\n'))).rejects.toThrow(/deepCheckBudget: must be at most 1/);
    await expect(timingOf(config('    deepCheckBudget: -0.1\n'))).rejects.toThrow(
      /deepCheckBudget: must be at least 0/,
    );
  });

  it('take contestedWindow as a duration, 1 h by default, never shorter than verifyEvery', async () => {
    expect((await timingOf(config(''))).contestedWindowMs).toBe(3_600_000);
    expect(
      (await timingOf(`${config('    contestedWindow: 10m\n')}defaults: { contestedWindow: 2h }\n`)).contestedWindowMs,
    ).toBe(600_000);
    await expect(timingOf(config('    verifyEvery: 2m\n    contestedWindow: 1m\n'))).rejects.toThrow(/contestedWindow/);
  });

  it('bound one another only by keys the table has', () => {
    const keys = Object.values(TIMING_SETTINGS).map((setting) => setting.key as string);
    for (const setting of Object.values(TIMING_SETTINGS)) {
      for (const bound of [
        'atLeast' in setting ? setting.atLeast : undefined,
        'atMost' in setting ? setting.atMost : undefined,
      ])
        if (bound !== undefined) expect(keys).toContain(bound);
    }
  });

  it('are each documented in the table, to which the configuration file’s documentation points', () => {
    for (const setting of Object.values(TIMING_SETTINGS)) expect(setting.doc.length).toBeGreaterThan(10);
    const header = readFileSync(new URL('../../../src/config/load-config.ts', import.meta.url), 'utf8').split('*/')[0]!;
    expect(header).toContain('TIMING_SETTINGS (src/config/timing.ts)');
  });
});

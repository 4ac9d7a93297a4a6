/**
 * A contributions file shaped to exhaust the parser (6 MB of nested brackets, 3 million deep,
 * far under `sync.contributionsMaxBytes`) is refused before it is parsed, naming file, line and
 * bound (`CONTRIBUTIONS_BEYOND_BOUNDS`), on a running engine and again at a restart with the file
 * still in place: the provider's last good state stays, and another provider's consumers go on
 * being checked meanwhile. A file of 10,000 entries (all naming one grant secret) is refused by its
 * count against the provider's `maxConsumers`; and two entries naming one grant secret: the later
 * one refused alone, naming file, line and field, the first applied.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineFixture } from '../engine/engine-fixture.js';
import { engineFixtures, type Consumer } from '../engine/engine-fixture.js';

const DEEP = 3_000_000;

/** The entry of `c` as the fixture writes it, with its values given. */
const entry = (f: EngineFixture, c: Consumer, values: string, secret = `../grants/${c.id}.secret`) =>
  `  - id: ${c.id}\n    login: ${c.login}\n    secret: ${secret}\n    values: ${values}\n`;
const rules = (c: Consumer) => `{ keys: ["${c.id}:*"], commands: ["+@read", "+@write", "+@connection"] }`;

/** The time of the latest check of `key` the status shows. */
async function lastCheck(f: EngineFixture, key: string): Promise<number> {
  const shown = (await f.status()).consumers.find((c) => c.consumer === key);
  return Date.parse(shown?.lastCheck?.at ?? '0');
}

/** Waits until every consumer of `of` was checked after `since`, and is held. */
async function checkedSince(f: EngineFixture, of: readonly Consumer[], since: number): Promise<void> {
  await f.until(
    `${of.map((c) => c.key).join(', ')} checked again`,
    async () => (await Promise.all(of.map((c) => lastCheck(f, c.key)))).every((at) => at > since),
    60_000,
  );
  const states = (await f.status()).consumers.filter((c) => of.some((o) => o.key === c.consumer));
  expect(states.map((c) => `${c.consumer}:${c.state}`).sort()).toEqual(of.map((c) => `${c.key}:held`).sort());
}

describe('a contributions file beyond the parser bounds', () => {
  const fixture = engineFixtures();

  it('nested millions deep: refused by line and bound, at once and at a restart, while the other provider is checked', async () => {
    const f = await fixture({
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      ledger: { adapterKind: 'postgres-roles', consumers: 2 },
    });
    const engine = await f.startHeld();
    const file = join(f.dir, 'contributions/cache.yaml');
    const [kept, dropped] = f.consumers as [Consumer, Consumer];
    const values = `{ keys: ${'['.repeat(DEEP)}${']'.repeat(DEEP)} }`;
    // the first entry alone, then an entry of millions of brackets: read whole, it would remove `dropped`
    const text = `consumers:\n${entry(f, kept, rules(kept))}${entry(f, dropped, values)}`;
    await writeFile(`${file}.new`, text);
    renameSync(`${file}.new`, file);

    let error = '';
    await f.until(
      'the provider status says the file is refused',
      async () => {
        error = (await engine.store.providerStatus('cache'))?.contributionsError ?? '';
        return error !== '';
      },
      60_000,
    );
    const refusal = `invalid contributions ${file} (1 problem):\n  ${file}:9: nested more than 64 levels deep (holdfast's bound on one contributions entry); refused before it is parsed`;
    expect(error).toBe(refusal);
    const refusedAt = Date.now();
    // the other provider's consumers go on being checked, and this one's last good state stays
    await checkedSince(f, f.ledgerConsumers, refusedAt);
    await checkedSince(f, f.consumers, refusedAt);
    expect(await f.canLogin(dropped)).toBe(true);
    expect(f.logs.filter((l) => l.consumer === dropped.key && l.msg === 'no longer declared; removing')).toEqual([]);

    // at a restart with the file in place: refused again, and the other provider checked
    const restarted = Date.now();
    await f.engines.splice(0)[0]!.stop();
    const again = await f.start();
    await f.until(
      'refused at the restart',
      async () => (await again.store.providerStatus('cache'))?.contributionsError === refusal,
      60_000,
    );
    await checkedSince(f, [...f.ledgerConsumers, ...f.consumers], restarted);
    expect(
      f.logs.filter((l) => l.msg.includes('contributions refused; the last good desired state stays in force')),
    ).toHaveLength(2);
  }, 240_000);

  it('10,000 entries naming one grant secret: refused by count against maxConsumers; a shared secret: the later entry refused alone', async () => {
    const f = await fixture({
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      providerLines: ['maxConsumers: 5000'],
    });
    const engine = await f.startHeld();
    const file = join(f.dir, 'contributions/cache.yaml');
    const [first, second] = f.consumers as [Consumer, Consumer];
    const flood = Array.from({ length: 10_000 }, (_, i) =>
      entry(f, { ...first, id: `f${i}`, login: `t${f.tag}_f${i}` }, rules(first), `../grants/${first.id}.secret`),
    );
    writeFileSync(
      `${file}.new`,
      `consumers:\n${entry(f, first, rules(first))}${entry(f, second, rules(second))}${flood.join('')}`,
    );
    renameSync(`${file}.new`, file);
    await f.until(
      'the count refused',
      async () => ((await engine.store.providerStatus('cache'))?.contributionsError ?? '') !== '',
      60_000,
    );
    expect((await engine.store.providerStatus('cache'))?.contributionsError).toBe(
      `invalid contributions ${file} (1 problem):\n  ${file}:20002: consumers: 10,002 consumers, more than providers[0].maxConsumers (5,000); refused whole, before its entries are read`,
    );
    expect((await f.status()).consumers.map((c) => `${c.consumer}:${c.state}`)).toEqual(
      f.consumers.map((c) => `${c.key}:held`),
    );

    // the second names the first's grant secret: refused alone, its accepted spec kept; the first applied
    writeFileSync(
      `${file}.new`,
      `consumers:\n${entry(f, first, rules(first))}${entry(f, second, rules(second), `../grants/./${first.id}.secret`)}`,
    );
    renameSync(`${file}.new`, file);
    const shown = async (c: Consumer) => (await f.status()).consumers.find((s) => s.consumer === c.key)!;
    await f.until('the shared secret refused', async () => (await shown(second)).refused !== null, 60_000);
    expect((await shown(second)).refused).toBe(
      `new spec refused by policy, the last accepted one kept: ${file}:8: consumers[1].secret: names the grant secret of consumers[0] (${first.id}); a grant secret serves one consumer, refused`,
    );
    expect((await shown(first)).state).toBe('held');
    expect(await f.canLogin(first)).toBe(true);
    expect(await f.canLogin(second)).toBe(true);
  }, 180_000);
});

/**
 * A contributions file larger than `sync.contributionsMaxBytes` (64 MiB by default) is refused
 * unread, by file and with its size: the last good desired state stays in force and nothing is
 * removed, on a running engine against real servers. The file is valid YAML (a head declaring all
 * but one of the consumers, then 65 MiB of comment), so read whole it would remove that one.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineFixtures } from '../engine/engine-fixture.js';

const MiB = 1024 * 1024;

describe('an oversized contributions file', () => {
  const fixture = engineFixtures();

  it('is refused with its size, and every consumer declared before stays held', async () => {
    const f = await fixture({ consumers: 3, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    const engine = await f.startHeld();
    const file = join(f.dir, 'contributions/cache.yaml');
    const dropped = f.consumers[2]!;

    // all but one consumer, then a comment padding the file to 65 MiB; written whole, then renamed into place
    const head = `consumers:\n${f.consumers
      .slice(0, 2)
      .map(
        (c) =>
          `  - id: ${c.id}\n    login: ${c.login}\n    secret: ../grants/${c.id}.secret\n    values: { keys: ["${c.id}:*"], commands: ["+@read", "+@write", "+@connection"] }\n`,
      )
      .join('')}# `;
    const size = 65 * MiB;
    const padded = Buffer.alloc(size, 'x');
    padded.write(head, 0, 'utf8');
    padded.write('\n', size - 1, 'utf8');
    // written without blocking: the engine runs in this process, and a 65 MiB synchronous write under load held its
    // checks past their deadline (couldNotAsk, not what this test is about)
    await writeFile(`${file}.new`, padded);
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
    expect(error).toBe(
      `invalid contributions ${file} (1 problem):\n  ${file}: the file is 65 MiB (68,157,440 bytes), more than sync.contributionsMaxBytes (64 MiB (67,108,864 bytes)); refused unread`,
    );
    const said = f.logs.filter((l) =>
      l.msg.includes('contributions refused; the last good desired state stays in force'),
    );
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe(50); // error

    // nothing removed: every consumer still has its record, is held, and logs in; the dropped one too
    const status = await f.status();
    expect(status.consumers.map((c) => `${c.consumer}:${c.state}`).sort()).toEqual(
      f.consumers.map((c) => `${c.key}:held`),
    );
    for (const c of f.consumers) expect(await f.canLogin(c), c.key).toBe(true);
    expect(f.logs.filter((l) => l.consumer === dropped.key && l.msg === 'no longer declared; removing')).toEqual([]);
    expect((await f.status()).providers[0]!.problems.join('\n')).toContain('refused unread');

    // the same head, without its padding, is read: it would have removed the dropped consumer
    writeFileSync(`${file}.new`, `${head}\n`);
    renameSync(`${file}.new`, file);
    await f.until('the dropped consumer is removed', async () => !(await f.canLogin(dropped)), 30_000);
    expect((await engine.store.providerStatus('cache'))?.contributionsError).toBeNull();
  }, 120_000);
});

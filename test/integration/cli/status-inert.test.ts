/**
 * Text that reaches a terminal is inert: a contributions file is written by others, and its keys,
 * ids and patterns come back in problems. `holdfast status` (and `--json`) prints them with every
 * C0 and C1 control and Unicode format character escaped: a YAML key holding `ESC[2J` and a fake
 * "all held" line cannot clear the screen, an id holding U+202E cannot turn the line around.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

/** Any control or format character but the newline. */
const UNSAFE = /(?!\n)[\p{Cc}\p{Cf}]/u;

async function status(f: EngineFixture, ...more: string[]): Promise<string> {
  const child = spawnHoldfast(['status', '-c', join(f.dir, 'holdfast.yaml'), ...more]);
  await exitOf(child);
  return child.output();
}

const CLEAR = '\u001b[2J\u001b[H\u001b[32mall 2 consumers held\u001b[0m';
const EVIL_ID = 'photos\u202egpj.exe';

describe('holdfast status', () => {
  const fixture = engineFixtures();

  it('prints no control byte or format character from a hostile contributions file', async () => {
    const f = await fixture({ consumers: 2 });
    await f.startHeld();
    const file = join(f.dir, 'contributions/cache.yaml');
    const [a, b] = f.consumers;
    // an unknown field whose key clears the screen; an id (twice) and a key pattern holding U+202E; a C1 CSI
    const hostile = [
      'consumers:',
      `  - id: ${a!.id}`,
      `    login: ${a!.login}`,
      `    secret: ../grants/${a!.id}.secret`,
      `    ${JSON.stringify(CLEAR)}: 1`,
      `    "\u009b2J": 2`,
      `  - id: ${JSON.stringify(EVIL_ID)}`,
      `    login: ${b!.login}`,
      `    secret: ../grants/${b!.id}.secret`,
      `    values: { keys: [${JSON.stringify(`${b!.id}:\u202e*`)}] }`,
      `  - id: ${JSON.stringify(EVIL_ID)}`,
      `    login: ${b!.login}x`,
      `    secret: ../grants/${b!.id}.secret`,
      '',
    ].join('\n');
    writeFileSync(`${file}.new`, hostile);
    renameSync(`${file}.new`, file);

    let output = '';
    await f.until(
      'the status says the file is refused',
      async () => {
        output = await status(f, '--all');
        return output.includes('contributions refused');
      },
      60_000,
    );
    expect(output).toContain('unknown field');
    expect(output).toContain('\\u001b[2J'); // said, escaped
    expect(output).toContain('photos\\u202egpj.exe');
    expect(output).toContain('may not contain Unicode format characters');
    expect(output).toContain(`cache/${a!.id}`);
    expect(output.match(UNSAFE)).toBeNull();

    const json = await status(f, '--json');
    expect(json.match(UNSAFE)).toBeNull();
    // valid JSON, meaning what was written
    const report = JSON.parse(json) as { providers: Array<{ problems: string[] }> };
    const problems = report.providers[0]!.problems.join('\n');
    expect(problems).toContain(EVIL_ID);
    expect(problems).toContain('\u009b2J');
  }, 120_000);
});

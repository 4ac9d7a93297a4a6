/**
 * What an upgrade from an earlier release does, measured (opt-in: it needs that release's checkout).
 * The earlier release's `holdfast run` (its own source, through tsx) holds 300 redis-acl consumers
 * with the README's commands, runs on a while, and is stopped (SIGTERM); this checkout's `holdfast run`
 * starts on the same configuration, store, queue and cache. For the first 20 s of it, as the
 * finding counted: the cache's `ACL SETUSER`s of consumers' logins (a counting proxy) and the
 * transitions the new release logs into `applying` or `lost`. None is expected.
 *
 *   git archive a442ce6 | tar -x -C /tmp/hf-a442ce6 && ln -s "$PWD/node_modules" /tmp/hf-a442ce6/
 *   HOLDFAST_UPGRADE_FROM=/tmp/hf-a442ce6 npx vitest run --project integration test/integration/engine/upgrade-from-release.test.ts
 *
 * `HOLDFAST_UPGRADE_NEW_KEY=1`: the fingerprint key file is made anew between the two (a release
 * started from another directory); `HOLDFAST_UPGRADE_TO=<checkout>`: another checkout than this one
 * starts second (see docs/contributing.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { readSettings } from '../../backends/settings.js';
import { redisCommandCounter } from '../../support/redis-command-counter.js';
import { engineFixtures, type LogLine } from './engine-fixture.js';

const { upgrade } = readSettings();
const FROM = upgrade.from;
const TO = upgrade.to ?? join(import.meta.dirname, '../../..');
const CONSUMERS = 300;
const WINDOW_MS = 20_000;
/** How long the earlier release runs on once all are held: past every consumer's first check, as a fleet that ran. */
const RUN_FOR_MS = 90_000;
const COMMANDS = ['+@read', '+@write', '+@connection', '+@pubsub'];

/** `holdfast <args>` from the checkout at `root`, its output lines collected. */
function holdfast(root: string, args: string[], lines: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (d: Buffer) => lines.push(...d.toString().split('\n')));
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await exited(child);
}

/** Whether the release at `root` says, through `holdfast status`, that every consumer is held. */
async function allHeld(root: string, config: string): Promise<boolean> {
  const lines: string[] = [];
  await exited(holdfast(root, ['status', '--json', '--all', '-c', config], lines));
  try {
    const status = JSON.parse(lines.join('\n')) as { total: number; consumers: Array<{ state: string }> };
    return status.total === CONSUMERS && status.consumers.every((c) => c.state === 'held');
  } catch {
    return false;
  }
}

function parsed(line: string): LogLine | undefined {
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
}

describe.skipIf(FROM === undefined)('an upgrade from an earlier release', () => {
  const fixture = engineFixtures();

  it(`applies none of ${CONSUMERS} unchanged consumers in its first 20 s`, async () => {
    const [queue, server] = await Promise.all([ownBackend('redis'), ownBackend('redis')]);
    const cache = await redisCommandCounter(server);
    const f = await fixture({
      queue,
      provider: cache.endpoint,
      consumers: CONSUMERS,
      policy: `{ keyPrefix: "{id}:", allowedCommands: ${JSON.stringify(COMMANDS)} }`,
    });
    f.writeContributions(f.consumers, undefined, () => COMMANDS);
    const config = join(f.dir, 'holdfast.yaml');

    const before: string[] = [];
    const earlier = holdfast(FROM!, ['run', '-c', config], before);
    await f.until('every consumer held by the earlier release', () => allHeld(FROM!, config), 300_000);
    await new Promise((resolve) => setTimeout(resolve, RUN_FOR_MS));
    await stop(earlier);
    if (upgrade.newKey) rmSync(join(f.dir, '.holdfast'), { recursive: true, force: true });

    const after: string[] = [];
    const from = Date.now();
    const later = holdfast(TO, ['run', '-c', config], after);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    await stop(later);
    await cache.close();

    const logins = new Set(f.consumers.map((c) => c.login));
    const seen = cache.commands.filter((c) => c.at >= from);
    const setusers = seen.filter((c) => c.name === 'ACL SETUSER' && logins.has(c.target ?? ''));
    const moves = after
      .map(parsed)
      .filter((l): l is LogLine => l !== undefined && (l.to === 'applying' || l.to === 'lost'));
    const commands = new Map<string, number>();
    for (const c of seen) commands.set(c.name, (commands.get(c.name) ?? 0) + 1);
    console.log(
      JSON.stringify({
        from: FROM,
        to: TO,
        newKey: upgrade.newKey,
        consumerSetusers: setusers.length,
        movesIntoApplyingOrLost: moves.length,
        reasons: [...new Set(moves.map((l) => l.msg))],
        cacheCommands: Object.fromEntries(commands),
      }),
    );
    expect({ setusers: setusers.length, moves: moves.length }).toEqual({ setusers: 0, moves: 0 });
  }, 600_000);
});

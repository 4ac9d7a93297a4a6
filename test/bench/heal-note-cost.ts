/**
 * `npx tsx test/bench/heal-note-cost.ts [heals per turn…]`: what a quiet heal's note (`workers/heal-noted.ts`: its two
 * timeline events and its finding) costs the queue's Redis, in commands (`INFO commandstats`, those run inside scripts
 * included), for a turn of 1, 8 and 256 heals noted together (`src/queue/coordination/heal-notes.ts`): a loss wave
 * (every login found missing: the cache restarted) and a real change (rules differ), each on a fresh key table.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createCoordination, holdfastPrefix } from '../../src/queue/coordination.js';
import type { TimelineEvent } from '../../src/queue/timeline-event.js';
import { NoteSeal } from '../../src/queue/note-seal.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { createRunDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';

const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1, 8, 256];
const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
const queue = await startOwned('redis', run, settings, await useDocker(settings));
const redis = new Redis(queue.url, { enableAutoPipelining: true });
const say = (text: string) => process.stdout.write(`${text}\n`);

/** Every command the server ran so far (the `INFO` asking it is one more). */
async function commands(): Promise<number> {
  const info = await redis.info('commandstats');
  return [...info.matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
}

try {
  say('queue-Redis commands per heal note (two timeline events and a finding), by heals noted in one turn:');
  for (const reason of ['missing', 'rules-differ'] as const) {
    for (const size of sizes) {
      const { notes } = createCoordination(
        redis,
        holdfastPrefix(`{note-${randomBytes(3).toString('hex')}}`),
        new NoteSeal(randomBytes(32)),
      );
      const t0 = Date.now();
      const heal = (i: number) => {
        const key = `cache/c${i}`;
        const events: TimelineEvent[] = [
          { at: t0, kind: 'lost', key, state: 'lost', reason, from: 'held', by: 'check' },
          {
            at: t0 + 5,
            kind: 'healed',
            key,
            state: 'held',
            reason: 'applied again',
            tookMs: 5,
            from: 'lost',
            by: 'heal',
          },
        ];
        const finding = { key, reason, words: `${reason} (x)`, at: t0 + i, windowMs: 3_600_000, waveMs: 120_000 };
        return notes.noteTimeline(events, finding);
      };
      await heal(0); // the script loaded
      const before = await commands();
      await Promise.all(Array.from({ length: size }, (_, i) => heal(i + 1)));
      const ran = (await commands()) - before - 1;
      say(`  ${reason.padEnd(13)} ${String(size).padStart(4)} per turn: ${(ran / size).toFixed(2)}`);
    }
  }
} finally {
  redis.disconnect();
  await queue.stop();
  await reapRunDir(run);
}

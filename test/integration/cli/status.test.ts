/**
 * `holdfast status` is never green over something unserved: each reason it can be red for is
 * made to happen for real, and the command must exit 1 and say it in one line.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Adapter } from '../../../src/adapters/adapter.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { dropDueWait } from '../../support/due-set.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

const MAIN = join(import.meta.dirname, '../../../src/cli/main.ts');

export function holdfastOnce(args: string[]): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output, ms: Date.now() - started })));
}

function status(f: EngineFixture, ...more: string[]) {
  return holdfastOnce(['status', '-c', join(f.dir, 'holdfast.yaml'), ...more]);
}

/** Polls `holdfast status` until its output matches. */
async function statusUntil(
  f: EngineFixture,
  what: RegExp,
  timeoutMs = 20_000,
): Promise<{ code: number | null; output: string }> {
  const start = Date.now();
  for (;;) {
    const result = await status(f);
    if (what.test(result.output)) return result;
    if (Date.now() - start > timeoutMs) throw new Error(`status never said ${what}; last:\n${result.output}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('holdfast status is red, naming why', () => {
  const fixture = engineFixtures();

  it('on a fresh store (contributions never read), and creates nothing', async () => {
    const f = await fixture({ consumers: 3 });
    const keyFile = join(f.dir, '.holdfast/fingerprint.key');
    rmSync(join(f.dir, '.holdfast'), { recursive: true }); // the fixture's own loading made one
    const { code, output } = await status(f);
    expect(output).toContain('provider cache: contributions never read: is `holdfast run` running?');
    expect(code).toBe(1);
    const json = JSON.parse((await status(f, '--json')).output) as { healthy: boolean };
    expect(json.healthy).toBe(false);
    expect(existsSync(keyFile)).toBe(false);
  });

  it('while declared consumers have no record yet (no worker)', async () => {
    const f = await fixture({ consumers: 3 });
    await f.start({ sync: true, worker: false });
    const { code, output } = await statusUntil(f, /declared consumers/);
    expect(output).toContain(
      'provider cache: 3 of 3 declared consumers have no record yet: their first apply has not finished (is a worker running?)',
    );
    expect(code).toBe(1);
  });

  it('when the contributions were never read successfully', async () => {
    const f = await fixture({ consumers: 1 });
    writeFileSync(join(f.dir, 'contributions/cache.yaml'), 'consumers:\n  - id: [not, a, name]\n');
    await f.start({ sync: true, worker: false });
    const { code, output } = await statusUntil(f, /contributions never read successfully/);
    expect(output).toMatch(/provider cache: contributions never read successfully: .*cache\.yaml/);
    expect(code).toBe(1);
  });

  it('when no check has run for longer than twice the interval plus the timeout (no worker running)', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    await f.startHeld();
    expect((await status(f)).code).toBe(0);
    for (const engine of f.engines.splice(0)) await engine.stop();
    // until the provider's last check is old too, a consumer's late check reads as queued behind a backlog
    const { code, output } = await statusUntil(f, /provider cache: not asked for/);
    expect(output).toMatch(/provider cache: not asked for \d+s: is a worker running\?/);
    expect(code).toBe(1);
    const all = await status(f, '--all');
    expect(all.output).toMatch(
      new RegExp(`! ${f.consumers[0]!.key}\\s+held .*not asked for \\d+s: is a worker running\\?`),
    );
  });

  it('when one consumer is not asked for that long (its job lost) while the others are', async () => {
    const f = await fixture({ consumers: 3, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    await f.startHeld();
    const victim = f.consumers[1]!;
    // its wait dropped from the due set (as a queue that loses it would): nobody asks about it until the next sweep
    const redis = new Redis(sharedBackend('redis').url);
    await f.until('its wait removed', () => dropDueWait(redis, f.config.queue.prefix, victim.key), 10_000);
    redis.disconnect();
    const { code, output } = await statusUntil(f, /not asked for/);
    expect(output).toMatch(new RegExp(`! ${victim.key}\\s+held .*not asked for \\d+s: is a worker running\\?`));
    expect(output).not.toContain('provider cache: not asked for');
    expect(output).not.toContain(f.consumers[0]!.key);
    expect(code).toBe(1);
  });

  it('when checks wait behind a backlog while a worker runs, saying so rather than asking whether one runs', async () => {
    const f = await fixture({ consumers: 160, concurrency: 1, timing: { verifyEvery: '2s', checkTimeout: '1500ms' } });
    // a backend that answers each check in 1 s: a worker of one job slot runs 16 due waits at once, so each of 160
    // consumers is asked every 10 s, past twice the interval and the timeout
    const inner = redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!)) as Adapter;
    const slow = <T>(answer: () => Promise<T>) => new Promise((r) => setTimeout(r, 1000)).then(answer);
    const adapter: Adapter = {
      create: (grant, options) => inner.create(grant, options),
      remove: (login, options, values) => inner.remove(login, options, values),
      holds: (grant, options) => slow(() => inner.holds!(grant, options)),
      authenticates: (grant, options) => slow(() => inner.authenticates!(grant, options)),
      close: () => inner.close(),
    };
    await f.startHeld(undefined, adapter);
    const { code, output } = await statusUntil(f, /not asked for/, 40_000);
    expect(output).toMatch(
      /! \S+\s+held .*not asked for \d+s: its check is queued behind a backlog \(workers are running: a check of its provider ended \d+s ago\)/,
    );
    expect(output).not.toContain('is a worker running?');
    expect(code).toBe(1);
  });

  it('when a provider cannot be asked', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 2,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    await f.startHeld();
    await provider.down();
    const { code, output } = await statusUntil(f, /cannot be asked about 2 consumers/);
    expect(output).toMatch(new RegExp(`! ${f.consumers[0]!.key}\\s+could not ask`));
    expect(code).toBe(1);
    await provider.up();
    await f.until('held again', () => f.allHeld());
  });

  it('when a consumer is rejected by policy', async () => {
    const f = await fixture({ consumers: 2 });
    f.writeContributions(f.consumers, (c) => (c === f.consumers[1] ? '*' : `${c.id}:*`));
    await f.start();
    const { code, output } = await statusUntil(f, /rejected by policy/);
    expect(output).toContain('provider cache: 1 consumer rejected by policy');
    expect(output).toMatch(new RegExp(`! ${f.consumers[1]!.key}\\s+rejected by policy`));
    expect(output).not.toContain(f.consumers[0]!.key);
    expect(code).toBe(1);
  });

  it('when the record store cannot be reached, naming it, within connectTimeout', async () => {
    const f = await fixture({ consumers: 1 });
    const queue = sharedBackend('redis');
    const config = join(f.dir, 'no-store.yaml');
    writeFileSync(
      config,
      [
        `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
        'store: { url: "mongodb://127.0.0.1:1/" }',
        'providers:',
        '  - { name: cache, adapter: redis-acl, admin: { url: "redis://127.0.0.1:2" }, contributions: contributions/cache.yaml }',
      ].join('\n'),
    );
    const { code, output, ms } = await holdfastOnce(['status', '-c', config]);
    expect(output).toMatch(/record store mongodb:\/\/127\.0\.0\.1:1\/ unreachable: connection refused/);
    expect(code).toBe(1);
    // the default connectTimeout is 5 s; generous for start-up on a loaded machine
    expect(ms).toBeLessThan(30_000);
  });

  it("when the queue's Redis cannot be reached, naming it", async () => {
    const f = await fixture({ consumers: 1 });
    const store = sharedBackend('mongodb');
    const config = join(f.dir, 'no-queue.yaml');
    writeFileSync(
      config,
      [
        'queue: { url: "redis://127.0.0.1:1" }',
        `store: { url: "mongodb://${store.host}:${store.port}/?authSource=admin", username: ${store.admin.username}, passwordFile: secrets/store }`,
        'providers:',
        '  - { name: cache, adapter: redis-acl, admin: { url: "redis://127.0.0.1:2" }, contributions: contributions/cache.yaml }',
      ].join('\n'),
    );
    const { code, output } = await holdfastOnce(['status', '-c', config]);
    expect(output).toMatch(/queue Redis redis:\/\/127\.0\.0\.1:1\/0 unreachable: connection refused/);
    expect(code).toBe(1);
  });

  it('and green, with counts only, when everything is held', async () => {
    const f = await fixture({ consumers: 3 });
    await f.startHeld();
    const { code, output } = await status(f);
    expect(output).toContain('provider cache: 3 consumers (3 held), 3 declared');
    expect(output).toContain('all 3 consumers held');
    expect(output).not.toContain('CONSUMER');
    expect(code).toBe(0);
    expect((await status(f, '--all')).output.match(/ cache\/c000\d/g)).toHaveLength(3);
  });
});

describe('the holdfast command line', () => {
  it('exits 2 on a usage error, 0 with --version, and its help names exit codes, variables and the worker', async () => {
    const bogus = await holdfastOnce(['status', '--bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.output).toContain("unknown option '--bogus'");
    const version = await holdfastOnce(['--version']);
    expect(version).toMatchObject({ code: 0, output: '0.1.0\n' });
    const help = await holdfastOnce(['status', '--help']);
    expect(help.code).toBe(0);
    for (const words of [
      'Exit codes:',
      '1  status: something is not served',
      'plan: something would change',
      'HOLDFAST_CONFIG',
      'HOLDFAST_LOG_LEVEL',
      'a running worker',
    ]) {
      expect(help.output).toContain(words);
    }
    expect((await holdfastOnce(['check', '--help'])).output).toMatch(/only queues a job: a\s+running worker/);
  });
});

/** holdfast end to end on its command line: run, status, check, a graceful stop, bad configuration. */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { spawnHoldfast, type HoldfastProcess } from '../../support/holdfast-cli.js';
import { EngineFixture } from '../engine/engine-fixture.js';

async function holdfastOnce(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawnHoldfast(args);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output: child.output() };
}

describe('the holdfast command', () => {
  let fixture: EngineFixture | undefined;
  let run: HoldfastProcess | undefined;
  afterAll(async () => {
    run?.kill('SIGKILL');
    await fixture?.stop();
  });

  it('runs, reports status, heals, and stops gracefully', async () => {
    fixture = await EngineFixture.create({
      queue: sharedBackend('redis'),
      store: sharedBackend('mongodb'),
      provider: sharedBackend('redis'),
      consumers: 3,
      timing: { verifyEvery: '1s', checkTimeout: '500ms', secretGrace: '2s' },
    });
    const f = fixture;
    const config = join(f.dir, 'holdfast.yaml');
    const [, , late] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0], (typeof f.consumers)[0]];
    rmSync(late.secretPath); // its grant secret is not there yet

    run = spawnHoldfast(['run', '-c', config]);
    const status = () => holdfastOnce(['status', '-c', config, '--json', '--all']);
    await f.until('two held, one waiting for its secret', async () => {
      const { output } = await status();
      try {
        const report = JSON.parse(output) as { consumers: Array<{ state: string }> };
        return (
          report.consumers
            .map((c) => c.state)
            .sort()
            .join() === 'held,held,waitingForSecret'
        );
      } catch {
        return false;
      }
    });
    const unhealthy = await holdfastOnce(['status', '-c', config]);
    expect(unhealthy.code).toBe(1);
    expect(unhealthy.output).toMatch(new RegExp(`! ${late.key}\\s+waiting for its grant secret`));
    expect(unhealthy.output).toContain('NOT HEALTHY: 1 of 3 consumers not served');

    writeFileSync(late.secretPath, `${late.password}\n`, { mode: 0o600 });
    await f.until('status exits 0', async () => (await status()).code === 0, 10_000);
    const healthy = await holdfastOnce(['status', '-c', config]);
    expect(healthy.code).toBe(0);
    expect(healthy.output).toContain('all 3 consumers held');
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);

    const check = await holdfastOnce(['check', f.consumers[0]!.key, '-c', config]);
    expect(check).toMatchObject({ code: 0 });
    expect(check.output).toContain(`CHECK_NOW sent to ${f.consumers[0]!.key}`);
    const suspended = await holdfastOnce(['suspend', f.consumers[1]!.key, '-c', config]);
    expect(suspended).toMatchObject({ code: 0 });
    await f.until(
      'status names the suspended consumer',
      async () =>
        (await holdfastOnce(['status', '-c', config])).output.includes('suspended: not checked until resumed'),
      10_000,
    );
    expect((await status()).code).toBe(1);
    expect((await holdfastOnce(['resume', f.consumers[1]!.key, '-c', config])).code).toBe(0);
    await f.until('status exits 0 once resumed', async () => (await status()).code === 0, 10_000);
    const unknown = await holdfastOnce(['check', 'cache/nobody', '-c', config]);
    expect(unknown.code).toBe(2);
    expect(unknown.output).toContain('no consumer "cache/nobody"');

    run.kill('SIGTERM');
    const code = await new Promise((resolve) => run!.once('exit', resolve));
    expect(code).toBe(0);
    const lines = run
      .output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string });
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['SIGTERM: stopping; finishing in-flight jobs', 'stopped']),
    );
    for (const c of f.consumers) expect(run.output()).not.toContain(c.password);
    // a dozen CLI processes, each a few seconds on a machine that runs another suite beside this one
  }, 240_000);

  it('refuses a bad configuration, naming file, line and field, and exits 2', async () => {
    const dir = fixture!.dir;
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      'queue:\n  url: redis://127.0.0.1:6379\nstore:\n  url: mongodb://127.0.0.1:1\nproviders:\n  - name: cache\n    adapter: redis-acl\n    admin: { url: redis://127.0.0.1:1 }\n    contributions: c.yaml\n    verifyEvery: soon\n',
    );
    const { code, output } = await holdfastOnce(['status', '-c', bad]);
    expect(code).toBe(2);
    expect(output).toContain(`${bad}:10: providers[0].verifyEvery: `);
    expect(output).toContain('[CONFIG_INVALID]');
  });

  it('gives up starting when the record store cannot be reached, names it, and leaves nothing running', async () => {
    const dir = fixture!.dir;
    const config = join(dir, 'no-store.yaml');
    const queue = sharedBackend('redis');
    writeFileSync(
      config,
      [
        `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
        'store: { url: "mongodb://127.0.0.1:1/", connectTimeout: 2s }',
        'providers:',
        '  - { name: cache, adapter: redis-acl, admin: { url: "redis://127.0.0.1:2" }, contributions: contributions/cache.yaml }',
      ].join('\n'),
    );
    const { code, output } = await holdfastOnce(['run', '-c', config]);
    expect(code).toBe(2);
    expect(output).toContain('the record store at mongodb://127.0.0.1:1/ could not be reached within 2s');
    expect(output).toContain('[STORE_UNAVAILABLE]');
  });
});

/**
 * Two providers on one Redis, neither with a loginPrefix: each could claim (re-password, or
 * remove as an orphan) the other's logins. `holdfast run` refuses the configuration, naming
 * both providers, the file and their lines, and exits 2 before touching anything.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisLogin } from '../../backends/logins.js';
import { engineFixtures } from '../engine/engine-fixture.js';
import { spawnHoldfast } from '../../support/holdfast-cli.js';

async function holdfast(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawnHoldfast(args);
  // a run that starts would not exit by itself: stopped, so that it leaves nothing running
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, output: child.output() };
}

describe('two providers on one backend', () => {
  const fixture = engineFixtures();

  it('without loginPrefix: the configuration is refused naming both, and nothing is applied', async () => {
    const f = await fixture({ consumers: 1 });
    const config = join(f.dir, 'holdfast.yaml');
    const { host, port } = f.provider;
    // the same server as cache, spelled another way
    appendFileSync(config, `\n  - name: sessions\n    adapter: redis-acl\n    admin: { url: "redis://localhost:${port}/1", passwordFile: secrets/cache }\n    contributions: contributions/sessions.yaml\n`);
    writeFileSync(join(f.dir, 'contributions/sessions.yaml'), `consumers:\n  - { id: c0000, login: ${f.consumers[0]!.login}, secret: ../grants/c0000.secret }\n`);
    const lines = readFileSync(config, 'utf8').split('\n');
    const line = (text: string, after = 0) => lines.findIndex((l, i) => i >= after && l.includes(text)) + 1;
    const cacheUrl = line('url:', line('  - name: cache'));

    const { code, output } = await holdfast(['run', '-c', config]);
    expect(code).toBe(2);
    expect(output).toContain('[CONFIG_INVALID]');
    expect(output).toContain(
      `${config}:${line('localhost')}: providers[1].admin.url: provider sessions shares its backend (` +
        `${host === '127.0.0.1' ? 'loopback' : host}:${port}) with provider cache (${config}:${cacheUrl}), and not both set a loginPrefix`,
    );
    expect(await redisLogin(f.provider, f.consumers[0]!.login, f.consumers[0]!.password)).toBe(false);

    // kept apart by their prefixes, the same two load
    writeFileSync(config, readFileSync(config, 'utf8').replace('    contributions: contributions/sessions.yaml\n', '    contributions: contributions/sessions.yaml\n    loginPrefix: s_\n').replace('    contributions: contributions/cache.yaml\n', '    contributions: contributions/cache.yaml\n    loginPrefix: t\n'));
    const status = await holdfast(['status', '-c', config]);
    expect(status.output).not.toContain('[CONFIG_INVALID]');
  });
});

/**
 * Two providers on one Redis, neither with a loginPrefix: each could claim (re-password, or
 * remove as an orphan) the other's logins. `holdfast run` refuses the configuration, naming
 * both providers, the file and their lines, and exits 2 before touching anything. The same
 * for two providers whose key (or channel) prefixes overlap: a consumer id declared on both
 * (two teams' `photos`) would read and overwrite one another's keys; kept apart, they cannot.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisLogin } from '../../backends/logins.js';
import { Redis } from 'ioredis';
import { engineFixtures } from '../engine/engine-fixture.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';

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
    appendFileSync(
      config,
      `\n  - name: sessions\n    adapter: redis-acl\n    admin: { url: "redis://localhost:${port}/1", passwordFile: secrets/cache }\n    sharesHoldfastServer: true\n    contributions: contributions/sessions.yaml\n`,
    );
    writeFileSync(
      join(f.dir, 'contributions/sessions.yaml'),
      `consumers:\n  - { id: c0000, login: ${f.consumers[0]!.login}, secret: ../grants/c0000.secret }\n`,
    );
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

    // kept apart by their prefixes (logins, keys and channels), the same two load
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .replace(
          '    contributions: contributions/sessions.yaml\n',
          '    contributions: contributions/sessions.yaml\n    loginPrefix: s_\n    policy: { keyPrefix: "s/{id}:", channelPrefix: "s/{id}:" }\n',
        )
        .replace(
          '    contributions: contributions/cache.yaml\n',
          '    contributions: contributions/cache.yaml\n    loginPrefix: t\n',
        )
        .replace('policy: { keyPrefix: "{id}:"', 'policy: { keyPrefix: "c/{id}:", channelPrefix: "c/{id}:"'),
    );
    const status = await holdfast(['status', '-c', config]);
    expect(status.output).not.toContain('[CONFIG_INVALID]');
  });

  it("with the same consumer id on both and overlapping key prefixes: refused naming both; with prefixes of their own, neither reads the other's keys", async () => {
    const f = await fixture({ consumers: 1, providerLines: ['loginPrefix: t{tag}_'] });
    const config = join(f.dir, 'holdfast.yaml');
    const { host, port, admin } = f.provider;
    const cache = f.consumers[0]!;
    // another team's provider on the same Redis, with a consumer of the same id
    const sessions = { id: cache.id, login: `s${f.tag}_${cache.id}`, password: randomBytes(18).toString('base64url') };
    mkdirSync(join(f.dir, 'grants-sessions'));
    writeFileSync(join(f.dir, 'grants-sessions', `${sessions.id}.secret`), `${sessions.password}\n`, { mode: 0o600 });
    const declareSessions = (keys: string) =>
      writeFileSync(
        join(f.dir, 'contributions/sessions.yaml'),
        `consumers:\n  - { id: ${sessions.id}, login: ${sessions.login}, secret: ../grants-sessions/${sessions.id}.secret, values: { keys: ["${keys}"] } }\n`,
      );
    declareSessions(`${sessions.id}:*`);
    appendFileSync(
      config,
      `\n  - name: sessions\n    adapter: redis-acl\n    admin: { url: "redis://localhost:${port}", username: ${admin.username}, passwordFile: secrets/cache }\n` +
        `    contributions: contributions/sessions.yaml\n    secretsRoot: grants-sessions\n    sharesHoldfastServer: true\n    loginPrefix: s${f.tag}_\n`,
    );
    const lines = readFileSync(config, 'utf8').split('\n');
    const line = (text: string, after = 0) => lines.findIndex((l, i) => i >= after && l.includes(text)) + 1;

    const refused = await holdfast(['run', '-c', config]);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain(
      `${config}:${line('  - name: sessions')}: providers[1].policy.keyPrefix: the keys of provider sessions (keyPrefix "{id}:") and of provider cache (keyPrefix "{id}:", ${config}:${line('policy:', line('  - name: cache'))}) can be the same: ` +
        `both providers are on one backend (${host === '127.0.0.1' ? 'loopback' : host}:${port})`,
    );
    expect(refused.output).toContain('providers[1].policy.channelPrefix: the channels of provider sessions');
    expect(await redisLogin(f.provider, cache.login, cache.password)).toBe(false);
    expect(await redisLogin(f.provider, sessions.login, sessions.password)).toBe(false);

    // each provider's keys start with its own name: both load and serve, and neither reaches the other's keys
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .replace('policy: { keyPrefix: "{id}:"', 'policy: { keyPrefix: "cache:{id}:", channelPrefix: "cache:{id}:"')
        .replace(
          '    loginPrefix: s',
          '    policy: { keyPrefix: "sessions:{id}:", channelPrefix: "sessions:{id}:" }\n    loginPrefix: s',
        ),
    );
    f.writeContributions([cache], (c) => `cache:${c.id}:*`);
    declareSessions(`sessions:${sessions.id}:*`);
    const run = spawnHoldfast(['run', '-c', config]);
    const as = (login: string, password: string) => {
      const client = new Redis({
        host,
        port,
        username: login,
        password,
        maxRetriesPerRequest: 0,
        enableReadyCheck: false,
        lazyConnect: true,
      });
      client.on('error', () => undefined);
      return client;
    };
    const [a, b] = [as(cache.login, cache.password), as(sessions.login, sessions.password)];
    try {
      await f.until(
        'both logins served',
        async () =>
          (await redisLogin(f.provider, cache.login, cache.password)) &&
          (await redisLogin(f.provider, sessions.login, sessions.password)),
        60_000,
      );
      await a.set(`cache:${cache.id}:card`, 'team A');
      await b.set(`sessions:${sessions.id}:card`, 'team B');
      await expect(b.get(`cache:${cache.id}:card`)).rejects.toThrow(/^NOPERM/);
      await expect(b.set(`cache:${cache.id}:card`, 'overwritten')).rejects.toThrow(/^NOPERM/);
      await expect(a.get(`sessions:${sessions.id}:card`)).rejects.toThrow(/^NOPERM/);
      expect(await a.get(`cache:${cache.id}:card`)).toBe('team A');
      expect(await b.get(`sessions:${sessions.id}:card`)).toBe('team B');
    } finally {
      a.disconnect();
      b.disconnect();
      run.kill('SIGTERM');
      await exitOf(run, 30_000);
      if (run.exitCode === null) run.kill('SIGKILL');
    }
  });
});

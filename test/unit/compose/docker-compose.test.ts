/**
 * docker-compose.yml cannot be run here (no Docker engine): its syntax and everything it
 * refers to are checked instead: services, secrets and their files, mounted files, the
 * Dockerfile, ports, and the holdfast configuration it mounts (validated by holdfast itself).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import type { RedisConnectionConfig } from '../../../src/config/config.js';
import { loadConfig, parseListen } from '../../../src/config/load-config.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { refuseExposedDashboard } from '../../../src/http/listen-guard.js';

const ROOT = resolve(import.meta.dirname, '../../..');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  secrets?: string[];
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
};
const tmp = mkdtempSync(join(tmpdir(), 'holdfast-compose-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('docker-compose.yml', () => {
  const { services } = compose;

  it('runs the queue Redis (append-only file on), MongoDB, a Redis to provision, and holdfast from the Dockerfile', () => {
    expect(Object.keys(services).sort()).toEqual(['cache-redis', 'holdfast', 'mongodb', 'queue-redis']);
    expect(services['queue-redis']!.command!.join(' ')).toContain('--appendonly yes');
    expect(services.mongodb!.image).toMatch(/^mongo:/);
    const build = services.holdfast!.build!;
    expect(existsSync(join(ROOT, build.context, build.dockerfile))).toBe(true);
    const dockerfile = readFileSync(join(ROOT, build.dockerfile), 'utf8');
    expect(dockerfile).toContain('EXPOSE 9100');
    expect(dockerfile).toContain('dist/src/cli/main.js');
  });

  it('refers only to services, secrets, volumes and files that exist', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const dependency of Object.keys(service.depends_on ?? {}))
        expect(services, `${name} depends on ${dependency}`).toHaveProperty(dependency);
      for (const secret of service.secrets ?? []) {
        expect(compose.secrets, `${name} uses secret ${secret}`).toHaveProperty(secret);
        expect(existsSync(join(ROOT, compose.secrets[secret]!.file)), `secret file of ${secret}`).toBe(true);
      }
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(join(ROOT, source)), `${name} mounts ${source}`).toBe(true);
        else expect(compose.volumes, `${name} uses volume ${source}`).toHaveProperty(source);
      }
      for (const file of Object.values(service.environment ?? {}).filter((v) => v.startsWith('/run/secrets/'))) {
        expect(service.secrets, `${name} reads ${file}`).toContain(file.slice('/run/secrets/'.length));
      }
    }
  });

  it('publishes the dashboard on loopback at the port holdfast listens on, and mounts a configuration holdfast accepts', async () => {
    const holdfast = services.holdfast!;
    expect(holdfast.ports).toEqual(['127.0.0.1:9100:9100']);
    expect(holdfast.command).toEqual(['run', '-c', '/etc/holdfast/holdfast.yaml', '--http', '0.0.0.0:9100']);

    // the mounts, laid out here as the container sees them under /etc/holdfast and /run/secrets
    const mounts = new Map(
      (holdfast.volumes ?? []).map((v) => v.split(':') as [string, string]).map(([from, to]) => [to, from]),
    );
    const configSource = mounts.get('/etc/holdfast/holdfast.yaml')!;
    for (const sub of ['contributions', 'grants'])
      symlinkSync(join(ROOT, mounts.get(`/etc/holdfast/${sub}`)!), join(tmp, sub));
    const text = readFileSync(join(ROOT, configSource), 'utf8')
      .replaceAll('/run/secrets/', `${join(ROOT, 'examples/compose/secrets')}/`)
      .replace('/var/lib/holdfast/fingerprint.key', join(tmp, 'fingerprint.key'));
    writeFileSync(join(tmp, 'holdfast.yaml'), text);
    const config = await loadConfig(join(tmp, 'holdfast.yaml'), {
      adapters: ADAPTERS,
      environment: { stdoutIsTTY: false },
      readOnly: true,
    });
    expect(config.http.listen).toEqual({ host: '0.0.0.0', port: 9100 });
    expect(services).toHaveProperty((config.queue.connection as RedisConnectionConfig).host);
    expect(config.store.url).toMatch(/^mongodb:\/\/mongodb:27017\//);
    for (const p of config.providers) expect(services).toHaveProperty(new URL(p.admin.url).hostname);
    expect(existsSync(config.providers[0]!.contributionsPath)).toBe(true);

    // it listens on every address of its container, so it has a password, from a secret it mounts
    expect(config.http.auth?.username).toBe('holdfast');
    expect(config.http.auth?.password).toBe(
      readFileSync(join(ROOT, compose.secrets.dashboard!.file), 'utf8').trimEnd(),
    );
    expect(holdfast.secrets).toContain('dashboard');
    expect(() => refuseExposedDashboard(parseListen(holdfast.command![4]!), config.http.auth)).not.toThrow();
    expect(() => refuseExposedDashboard(parseListen(holdfast.command![4]!), undefined)).toThrow(
      'set http.passwordFile',
    );
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('CMD ["run", "-c", "/etc/holdfast/holdfast.yaml", "--http", "0.0.0.0:9100"]');
    expect(dockerfile).toContain('http.passwordFile');

    // every consumer it declares is accepted: its grant secret in the provider's own directory
    const declared = await loadContributions(config.providers[0]!);
    expect(declared.consumers.map((c) => [c.id, c.desired.problems])).toEqual(
      declared.consumers.map((c) => [c.id, []]),
    );
    expect(declared.consumers).toHaveLength(3);
  });

  it("checks holdfast's health with the dashboard's password, as the server wants it", async () => {
    const [kind, flag, script] = services.holdfast!.healthcheck!.test.slice(1);
    expect([kind, flag]).toEqual(['node', '-e']);
    expect(script).toContain("'/run/secrets/dashboard'");
    const password = readFileSync(join(ROOT, compose.secrets.dashboard!.file), 'utf8');
    const expected = `Basic ${Buffer.from(`holdfast:${password.replace(/\r?\n$/, '')}`).toString('base64')}`;
    const server = createServer((request, response) =>
      response.writeHead(request.headers.authorization === expected ? 200 : 401).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/healthz`;
    const run = (secretFile: string) =>
      new Promise<number>((resolve) => {
        const local = script!
          .replace('/run/secrets/dashboard', secretFile)
          .replace('http://127.0.0.1:9100/healthz', url);
        execFile(process.execPath, ['-e', local], (error) =>
          resolve(error ? ((error as { code?: number }).code ?? 1) : 0),
        );
      });
    try {
      expect(await run(join(ROOT, compose.secrets.dashboard!.file))).toBe(0);
      writeFileSync(join(tmp, 'wrong'), 'not-the-password\n');
      expect(await run(join(tmp, 'wrong'))).toBe(1);
    } finally {
      server.close();
    }
  });
});

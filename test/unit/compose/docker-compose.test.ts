/**
 * docker-compose.yml cannot be run here (no Docker engine): its syntax and everything it
 * refers to are checked instead: services, secrets and their files, mounted files, the
 * Dockerfile, ports, and the holdfast configuration it mounts (validated by holdfast itself).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';

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
      for (const dependency of Object.keys(service.depends_on ?? {})) expect(services, `${name} depends on ${dependency}`).toHaveProperty(dependency);
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

  it("publishes the dashboard on loopback at the port holdfast listens on, and mounts a configuration holdfast accepts", async () => {
    const holdfast = services.holdfast!;
    expect(holdfast.ports).toEqual(['127.0.0.1:9100:9100']);
    expect(holdfast.command).toEqual(['run', '-c', '/etc/holdfast/holdfast.yaml', '--http', '0.0.0.0:9100']);

    // the mounts, laid out here as the container sees them under /etc/holdfast and /run/secrets
    const mounts = new Map((holdfast.volumes ?? []).map((v) => v.split(':') as [string, string]).map(([from, to]) => [to, from]));
    const configSource = mounts.get('/etc/holdfast/holdfast.yaml')!;
    for (const sub of ['contributions', 'grants']) symlinkSync(join(ROOT, mounts.get(`/etc/holdfast/${sub}`)!), join(tmp, sub));
    const text = readFileSync(join(ROOT, configSource), 'utf8')
      .replaceAll('/run/secrets/', `${join(ROOT, 'examples/compose/secrets')}/`)
      .replace('/var/lib/holdfast/fingerprint.key', join(tmp, 'fingerprint.key'));
    writeFileSync(join(tmp, 'holdfast.yaml'), text);
    const config = await loadConfig(join(tmp, 'holdfast.yaml'), { adapters: ADAPTERS, environment: { stdoutIsTTY: false }, readOnly: true });
    expect(config.http.listen).toEqual({ host: '0.0.0.0', port: 9100 });
    expect(services).toHaveProperty(config.queue.connection.host);
    expect(config.store.url).toMatch(/^mongodb:\/\/mongodb:27017\//);
    for (const p of config.providers) expect(services).toHaveProperty(new URL(p.admin.url).hostname);
    expect(existsSync(config.providers[0]!.contributionsPath)).toBe(true);
    // every consumer it declares is accepted: its grant secret in the provider's own directory
    const declared = await loadContributions(config.providers[0]!);
    expect(declared.consumers.map((c) => [c.id, c.desired.problems])).toEqual(declared.consumers.map((c) => [c.id, []]));
    expect(declared.consumers).toHaveLength(3);
  });
});

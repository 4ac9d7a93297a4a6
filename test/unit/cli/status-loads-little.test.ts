/**
 * `holdfast status` is what operators run during an incident, every few seconds: it loads what it
 * reads with (the configuration's schemas, the store's and the queue's clients) and no adapter
 * driver, no adapter, no BullMQ. Loading them was 0.4 CPU-seconds of every status.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnvironment } from '../../backends/settings.js';

const root = join(import.meta.dirname, '../../..');

/** A configuration whose servers refuse at once: the status answers red without waiting. */
function refusingConfig(dir: string): string {
  mkdirSync(join(dir, 'secrets'));
  for (const name of ['queue', 'store', 'cache'])
    writeFileSync(join(dir, 'secrets', name), 'a-long-enough-password', { mode: 0o600 });
  writeFileSync(join(dir, 'cache.yaml'), 'consumers: []\n');
  const lines = [
    'queue: { url: "redis://127.0.0.1:1", passwordFile: secrets/queue }',
    'store: { url: "mongodb://127.0.0.1:1/", passwordFile: secrets/store }',
    'providers:',
    '  - { name: cache, adapter: redis-acl, admin: { url: "redis://127.0.0.1:3", passwordFile: secrets/cache }, contributions: cache.yaml }',
    '  - { name: pg, adapter: postgres-roles, admin: { url: "postgres://127.0.0.1:2/postgres", passwordFile: secrets/cache }, contributions: cache.yaml }',
  ];
  writeFileSync(join(dir, 'holdfast.yaml'), `${lines.join('\n')}\n`);
  return join(dir, 'holdfast.yaml');
}

/** Every module file the command `args` loads, as URLs (a loader hook notes each into a file). */
function modulesLoadedBy(dir: string, args: string[]): { urls: string[]; output: string } {
  const noted = join(dir, 'loaded.txt');
  writeFileSync(noted, '');
  const hooks = `data:text/javascript,${encodeURIComponent(
    `import { appendFileSync } from 'node:fs'; export async function load(url, context, next) { const r = await next(url, context); appendFileSync(${JSON.stringify(noted)}, url + '\\n'); return r; }`,
  )}`;
  const register = `data:text/javascript,${encodeURIComponent(`import { register } from 'node:module'; register(${JSON.stringify(hooks)});`)}`;
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', register, join(root, 'src/cli/main.ts'), ...args],
    {
      cwd: root,
      env: childEnvironment({ NODE_OPTIONS: '' }),
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { urls: readFileSync(noted, 'utf8').split('\n').filter(Boolean), output: `${run.stdout}${run.stderr}` };
}

describe('holdfast status', () => {
  it('loads no adapter driver, no adapter and no BullMQ, and still reads the configuration of each adapter kind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-status-loads-'));
    try {
      const { urls, output } = modulesLoadedBy(dir, ['status', '-c', refusingConfig(dir)]);
      // it ran as a status does against servers that refuse: red, naming them (not a configuration error)
      expect(output).toMatch(/unreachable/);
      expect(urls.some((url) => url.includes('/src/status/status-report.ts'))).toBe(true);
      const heavy = urls.filter((url) =>
        /\/node_modules\/(pg|pg-[^/]+|bullmq|@smithy\/[^/]+)\/|\/src\/adapters\/[^/]+\/[^/]+-adapter\.ts$/.test(url),
      );
      expect(heavy).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `holdfast doctor`, run as `nobody` (this suite runs as root, who reads every file): one line per problem, with what to do. */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, rmSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleForAnyUser } from '../../support/bundle-for-any-user.js';
import { EngineFixture, type Consumer } from '../engine/engine-fixture.js';

/** Everything under `dir` readable by anyone (what a deployment for another user would look like). */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) openUp(path);
    else chmodSync(path, 0o644);
  }
}

describe('holdfast doctor', () => {
  let fixture: EngineFixture | undefined;
  let bundle: string | undefined;
  afterAll(async () => {
    await fixture?.stop();
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it.runIf(process.getuid?.() === 0)('reports an unreadable grant file and an unreachable backend, one line each, and exits 1', async () => {
    fixture = await EngineFixture.create({ consumers: 3 });
    const f = fixture;
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    // nobody may not reach the checkout (nor its node_modules): it runs holdfast bundled
    const cli = (bundle = await bundleForAnyUser('src/cli/main.ts'));
    const doctor = (config: string, uid?: number) => {
      const run = spawnSync(process.execPath, [cli, 'doctor', '-c', config], {
        encoding: 'utf8',
        cwd: dirname(cli),
        ...(uid === undefined ? {} : { uid, gid: uid }),
      });
      const lines = run.stdout.split('\n').filter(Boolean);
      return { code: run.status, lines, problems: lines.filter((l) => !/^holdfast doctor: (\d+ problems?|no problem found) \(as uid \d+\)$/.test(l)), stderr: run.stderr };
    };

    openUp(f.dir);
    const [, locked] = f.consumers as [Consumer, Consumer];
    chmodSync(locked.secretPath, 0o600);
    writeFileSync(join(f.dir, 'contributions/other.yaml'), 'consumers: []\n', { mode: 0o644 });
    const config = join(f.dir, 'doctor.yaml');
    writeFileSync(
      config,
      `${readFileSync(join(f.dir, 'holdfast.yaml'), 'utf8')}\n  - name: other\n    adapter: redis-acl\n    admin: { url: "redis://127.0.0.1:1" }\n    contributions: contributions/other.yaml\n`,
      { mode: 0o644 },
    );

    const asNobody = doctor(config, nobody);
    expect(asNobody.stderr).toBe('');
    expect(asNobody.code).toBe(1);
    expect(asNobody.problems).toHaveLength(2);
    expect(asNobody.problems).toContainEqual(
      `holdfast doctor: grant secret of ${locked.key}: ${locked.secretPath} (EACCES; owner 0:0, mode 0600; holdfast runs as uid ${nobody} gid ${nobody}); make it readable by uid ${nobody} (chown or chmod), or run holdfast as its owner`,
    );
    expect(asNobody.problems.find((l) => l.includes('provider other'))).toMatch(
      new RegExp(`^holdfast doctor: backend of provider other \\(redis://127\\.0\\.0\\.1:1\\) does not answer: .+; start it, or correct providers\\[1\\]\\.admin in ${config.replace(/[.]/g, '\\.')}$`),
    );
    expect(asNobody.lines.at(-1)).toBe(`holdfast doctor: 2 problems (as uid ${nobody})`);

    // root reads the grant file: only the backend is left; and with the file readable, nobody finds nothing
    expect(doctor(config).problems).toHaveLength(1);
    chmodSync(locked.secretPath, 0o644);
    const fine = doctor(join(f.dir, 'holdfast.yaml'), nobody);
    expect(fine.lines).toEqual([`holdfast doctor: no problem found (as uid ${nobody})`]);
    expect(fine.code).toBe(0);
  });
});

/**
 * `holdfast doctor`, run as `nobody` (this suite runs as root, who reads every file): one line per
 * problem, with what to do; and each grant secret that will not do what its writer meant, named.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, rmSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleForAnyUser } from '../../support/bundle-for-any-user.js';
import { HOLDFAST_MAIN } from '../../support/holdfast-cli.js';
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

  it.runIf(process.getuid?.() === 0)(
    'reports an unreadable grant file and an unreachable backend, one line each, and exits 1',
    async () => {
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
        return {
          code: run.status,
          lines,
          problems: lines.filter((l) => !/^holdfast doctor: (\d+ problems?|no problem found) \(as uid \d+\)$/.test(l)),
          stderr: run.stderr,
        };
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
        new RegExp(
          `^holdfast doctor: backend of provider other \\(redis://127\\.0\\.0\\.1:1\\) does not answer: .+; start it, or correct providers\\[1\\]\\.admin in ${config.replace(/[.]/g, '\\.')}$`,
        ),
      );
      expect(asNobody.lines.at(-1)).toBe(`holdfast doctor: 2 problems (as uid ${nobody})`);

      // root reads the grant file: only the backend is left; and with the file readable, nobody finds nothing
      expect(doctor(config).problems).toHaveLength(1);
      chmodSync(locked.secretPath, 0o644);
      const fine = doctor(join(f.dir, 'holdfast.yaml'), nobody);
      expect(fine.lines).toEqual([`holdfast doctor: no problem found (as uid ${nobody})`]);
      expect(fine.code).toBe(0);
    },
  );
});

describe('holdfast doctor on grant secrets that will not do what their writers meant', () => {
  let fixture: EngineFixture | undefined;
  afterAll(() => fixture?.stop());

  it('names each case (file, finding, byte offset), never the secret, and exits 1', async () => {
    fixture = await EngineFixture.create({ consumers: 9 });
    const f = fixture;
    const hex = 'c0ffee'.repeat(11).slice(0, 64);
    const cases: Array<[bytes: Buffer, said: string]> = [
      [
        Buffer.from('Secret-one-value \n'),
        'ends in a space or tab before its line ends: the password includes it (byte 16; used as it is: a warning); rewrite it as one line holding the password alone',
      ],
      [
        Buffer.from('Secret-two-value\n\n'),
        'holds a second newline (a blank line, or a second line): a password is one line (byte 16; refused); rewrite it as one line holding the password alone',
      ],
      [
        Buffer.from('Secret-three-value\r\n'),
        'ends in CRLF: holdfast strips it, but an app that strips only LF would send a password ending in CR (byte 18; used as it is: a warning); rewrite it as one line holding the password alone',
      ],
      [
        Buffer.from('\ufeffSecret-four-value\n'),
        'begins with a byte-order mark (EF BB BF): the password includes U+FEFF as its first character (byte 0; used as it is: a warning); rewrite it as one line holding the password alone',
      ],
      [
        Buffer.concat([Buffer.from('Secret-'), Buffer.from([0xe9]), Buffer.from('five\n')]),
        'holds bytes that are not UTF-8: a password is text (byte 7; refused); rewrite it as one line holding the password alone',
      ],
      [
        Buffer.from(`${hex}\n`),
        'is 64 hex digits, the form of a SHA-256 hash (Redis takes #<hex> as one): holdfast takes the file as the password itself and hashes it; an app given the password behind that hash cannot log in (byte 0; used as it is: a warning); write the password itself, not a hash of it (holdfast hashes it for the backend)',
      ],
      [
        Buffer.from('SCRAM-SHA-256$4096:c2FsdHNhbHQ=$c3RvcmVka2V5:c2VydmVya2V5\n'),
        'is a SCRAM-SHA-256 verifier, which PostgreSQL takes as a stored hash: holdfast takes the file as the password itself; an app given the password behind it cannot log in (byte 0; used as it is: a warning); write the password itself, not a hash of it (holdfast hashes it for the backend)',
      ],
      [
        Buffer.from(`md5${'5f'.repeat(16)}\n`),
        "is 'md5' and 32 hex digits, which PostgreSQL takes as an MD5 hash: holdfast takes the file as the password itself; an app given the password behind it cannot log in (byte 0; used as it is: a warning); write the password itself, not a hash of it (holdfast hashes it for the backend)",
      ],
    ];
    cases.forEach(([bytes], i) => writeFileSync(f.consumers[i]!.secretPath, bytes, { mode: 0o600 }));
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', HOLDFAST_MAIN, 'doctor', '-c', join(f.dir, 'holdfast.yaml')],
      { encoding: 'utf8' },
    );
    const problems = run.stdout
      .split('\n')
      .filter((l) => l && !/^holdfast doctor: \d+ problems? \(as uid \d+\)$/.test(l));
    expect(run.stderr).toBe('');
    expect(problems).toEqual(
      cases.map(
        ([, said], i) =>
          `holdfast doctor: grant secret of ${f.consumers[i]!.key}: ${f.consumers[i]!.secretPath} ${said}`,
      ),
    );
    expect(run.status).toBe(1);
    // the ninth, sound, is not named; no secret's text is printed
    expect(run.stdout).not.toContain(f.consumers[8]!.key);
    for (const text of ['Secret-', hex, 'c2FsdHNhbHQ', '5f5f5f']) expect(run.stdout).not.toContain(text);
  });
});

/**
 * Reading grant secrets. The unreadable case runs the reader as `nobody`: this suite runs as
 * root, and root reads every file whatever its mode.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';
import { bundleForAnyUser } from '../../support/bundle-for-any-user.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-grants-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function code(path: string): Promise<string> {
  try {
    await readGrantSecret(path);
    return 'read';
  } catch (error) {
    return isHoldfastError(error) ? `${error.code}: ${error.message}` : String(error);
  }
}

describe('grant secrets', () => {
  it('reads the password without its trailing newline', async () => {
    writeFileSync(join(dir, 'ok.secret'), 'a-long-password\n');
    expect(await readGrantSecret(join(dir, 'ok.secret'))).toBe('a-long-password');
  });

  it('tells a missing file from an unusable one', async () => {
    expect(await code(join(dir, 'absent.secret'))).toBe(`SECRET_MISSING: grant secret ${join(dir, 'absent.secret')} does not exist`);
    writeFileSync(join(dir, 'short.secret'), 'short\n');
    expect(await code(join(dir, 'short.secret'))).toMatch(/^SECRET_INVALID: .* holds 5 characters; at least 8 are needed$/);
    mkdirSync(join(dir, 'dir.secret'));
    expect(await code(join(dir, 'dir.secret'))).toMatch(/^SECRET_INVALID: .* is a directory$/);
  });

  it('refuses a secret that is empty, too large or not text, naming the file and never the content', async () => {
    writeFileSync(join(dir, 'empty.secret'), '\n');
    expect(await code(join(dir, 'empty.secret'))).toBe(`SECRET_INVALID: grant secret ${join(dir, 'empty.secret')} is empty`);
    writeFileSync(join(dir, 'max.secret'), `${'m'.repeat(4096)}\r\n`);
    expect(await readGrantSecret(join(dir, 'max.secret'))).toBe('m'.repeat(4096));
    writeFileSync(join(dir, 'large.secret'), 'x'.repeat(4097));
    expect(await code(join(dir, 'large.secret'))).toBe(`SECRET_INVALID: grant secret ${join(dir, 'large.secret')} is larger than 4096 bytes; no password is`);
    writeFileSync(join(dir, 'huge.secret'), 'y'.repeat(1 << 20));
    expect(await code(join(dir, 'huge.secret'))).toMatch(/is larger than 4096 bytes/);
    writeFileSync(join(dir, 'binary.secret'), Buffer.from([0xff, 0xfe, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47]));
    expect(await code(join(dir, 'binary.secret'))).toMatch(/^SECRET_INVALID: .* is not text \(not UTF-8\)$/);
    writeFileSync(join(dir, 'nul.secret'), 'abcd\u0000efgh');
    expect(await code(join(dir, 'nul.secret'))).toMatch(/^SECRET_INVALID: .* is not text \(it holds control characters\)$/);
    writeFileSync(join(dir, 'utf8.secret'), 'pässwörd-ünïcode\n');
    expect(await readGrantSecret(join(dir, 'utf8.secret'))).toBe('pässwörd-ünïcode');
  });

  it.runIf(process.getuid?.() === 0)('names path, owner, mode and uid when the process may not read it', async () => {
    const path = join(dir, 'root-only.secret');
    writeFileSync(path, 'root-only-password\n', { mode: 0o600 });
    chmodSync(path, 0o600);
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const reader = await bundleForAnyUser({
      source: `import { readGrantSecret } from './src/secrets/grant-secret.ts';
        readGrantSecret(process.argv[2]!).then(() => console.log('read'), (e) => console.log(e.code + ': ' + e.message));`,
    });
    try {
      const result = spawnSync(process.execPath, [reader, path], { uid: nobody, gid: nobody, encoding: 'utf8', cwd: dirname(reader) });
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe(`SECRET_UNREADABLE: ${path} (EACCES; owner 0:0, mode 0600; holdfast runs as uid ${nobody} gid ${nobody})`);
      expect(result.stdout).not.toContain('root-only-password');
    } finally {
      rmSync(dirname(reader), { recursive: true, force: true });
    }
  });
});

/**
 * Reading grant secrets. The unreadable case runs the reader as `nobody`: this suite runs as
 * root, and root reads every file whatever its mode.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';

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

  it.runIf(process.getuid?.() === 0)('names path, owner, mode and uid when the process may not read it', () => {
    const path = join(dir, 'root-only.secret');
    writeFileSync(path, 'root-only-password\n', { mode: 0o600 });
    chmodSync(path, 0o600);
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const module = join(import.meta.dirname, '../../../src/secrets/grant-secret.ts');
    const script = `import { readGrantSecret } from ${JSON.stringify(module)};
      readGrantSecret(${JSON.stringify(path)}).then(() => console.log('read'), (e) => console.log(e.code + ': ' + e.message));`;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      uid: nobody,
      gid: nobody,
      encoding: 'utf8',
      cwd: join(import.meta.dirname, '../../..'),
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe(`SECRET_UNREADABLE: ${path} (EACCES; owner 0:0, mode 0600; holdfast runs as uid ${nobody} gid ${nobody})`);
    expect(result.stdout).not.toContain('root-only-password');
  });
});

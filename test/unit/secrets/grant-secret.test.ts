/**
 * Reading grant secrets. The unreadable case runs the reader as `nobody`: this suite runs as
 * root, and root reads every file whatever its mode.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';
import type { SecretRoots } from '../../../src/secrets/secret-roots.js';
import { bundleForAnyUser } from '../../support/bundle-for-any-user.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-grants-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** The directory is the provider's only root. */
const roots: SecretRoots = { own: [{ field: 'contributions', path: dir }], foreign: [] };

async function code(path: string): Promise<string> {
  try {
    await readGrantSecret(path, roots);
    return 'read';
  } catch (error) {
    return isHoldfastError(error) ? `${error.code}: ${error.message}` : String(error);
  }
}

describe('grant secrets', () => {
  it('reads the password without its trailing newline', async () => {
    writeFileSync(join(dir, 'ok.secret'), 'a-long-password\n');
    expect(await readGrantSecret(join(dir, 'ok.secret'), roots)).toBe('a-long-password');
  });

  it('tells a missing file from an unusable one', async () => {
    expect(await code(join(dir, 'absent.secret'))).toBe(
      `SECRET_MISSING: grant secret ${join(dir, 'absent.secret')} does not exist`,
    );
    writeFileSync(join(dir, 'short.secret'), 'short\n');
    expect(await code(join(dir, 'short.secret'))).toMatch(
      /^SECRET_INVALID: .* holds 5 characters; at least 8 are needed$/,
    );
    mkdirSync(join(dir, 'dir.secret'));
    expect(await code(join(dir, 'dir.secret'))).toBe(
      `SECRET_INVALID: grant secret ${join(dir, 'dir.secret')} is a directory, not a regular file; nothing was read from it`,
    );
  });

  it('refuses a secret that is empty, too large or not text, naming the file and never the content', async () => {
    writeFileSync(join(dir, 'empty.secret'), '\n');
    expect(await code(join(dir, 'empty.secret'))).toBe(
      `SECRET_INVALID: grant secret ${join(dir, 'empty.secret')} is empty`,
    );
    writeFileSync(join(dir, 'max.secret'), `${'m'.repeat(4096)}\r\n`);
    expect(await readGrantSecret(join(dir, 'max.secret'), roots)).toBe('m'.repeat(4096));
    writeFileSync(join(dir, 'large.secret'), 'x'.repeat(4097));
    expect(await code(join(dir, 'large.secret'))).toBe(
      `SECRET_INVALID: grant secret ${join(dir, 'large.secret')} is larger than 4096 bytes; no password is`,
    );
    writeFileSync(join(dir, 'huge.secret'), 'y'.repeat(1 << 20));
    expect(await code(join(dir, 'huge.secret'))).toMatch(/is larger than 4096 bytes/);
    writeFileSync(join(dir, 'binary.secret'), Buffer.from([0xff, 0xfe, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47]));
    expect(await code(join(dir, 'binary.secret'))).toMatch(/^SECRET_INVALID: .* is not text \(not UTF-8\)$/);
    writeFileSync(join(dir, 'nul.secret'), 'abcd\u0000efgh');
    expect(await code(join(dir, 'nul.secret'))).toMatch(
      /^SECRET_INVALID: .* is not text \(it holds control characters\)$/,
    );
    writeFileSync(join(dir, 'utf8.secret'), 'pässwörd-ünïcode\n');
    expect(await readGrantSecret(join(dir, 'utf8.secret'), roots)).toBe('pässwörd-ünïcode');
  });

  it.runIf(process.getuid?.() === 0)('names path, owner, mode and uid when the process may not read it', async () => {
    const path = join(dir, 'root-only.secret');
    writeFileSync(path, 'root-only-password\n', { mode: 0o600 });
    chmodSync(path, 0o600);
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const reader = await bundleForAnyUser({
      source: `import { readGrantSecret } from './src/secrets/grant-secret.ts';
        readGrantSecret(process.argv[2]!, { own: [{ field: 'contributions', path: process.argv[3]! }], foreign: [] }).then(() => console.log('read'), (e) => console.log(e.code + ': ' + e.message));`,
    });
    try {
      const result = spawnSync(process.execPath, [reader, path, dir], {
        uid: nobody,
        gid: nobody,
        encoding: 'utf8',
        cwd: dirname(reader),
      });
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe(
        `SECRET_UNREADABLE: ${path} (EACCES; owner 0:0, mode 0600; holdfast runs as uid ${nobody} gid ${nobody})`,
      );
      expect(result.stdout).not.toContain('root-only-password');
    } finally {
      rmSync(dirname(reader), { recursive: true, force: true });
    }
  });
});

/**
 * A file that is no grant secret of this provider's: refused with what it is, before anything is read, and promptly.
 */
describe('grant secrets opened safely', () => {
  const ledger = join(dir, 'ledger');
  const elsewhere = mkdtempSync(join(tmpdir(), 'holdfast-elsewhere-'));
  afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));
  /** The cache's roots: the directory, less the ledger's secretsRoot inside it. */
  const cache: SecretRoots = {
    own: [{ field: 'contributions', path: dir }],
    foreign: [{ provider: 'ledger', field: 'secretsRoot', path: ledger }],
  };
  const refusal = async (path: string, given: SecretRoots = cache): Promise<string> => {
    try {
      await readGrantSecret(path, given);
      return 'read';
    } catch (error) {
      return isHoldfastError(error) ? `${error.code}: ${error.message}` : String(error);
    }
  };
  mkdirSync(ledger);
  writeFileSync(join(dir, 'other.secret'), 'another-consumers-password\n');
  writeFileSync(join(elsewhere, 'out.secret'), 'a-password-out-of-the-roots\n');
  writeFileSync(join(ledger, 'billing.secret'), 'the-ledgers-password\n');

  it('refuses a FIFO at once, without waiting for a writer (in a child, so that a hang fails rather than stalls)', async () => {
    const fifo = join(dir, 'fifo.secret');
    execFileSync('mkfifo', [fifo]);
    const reader = await bundleForAnyUser({
      source: `import { readGrantSecret } from './src/secrets/grant-secret.ts';
        readGrantSecret(process.argv[2]!, { own: [{ field: 'contributions', path: process.argv[3]! }], foreign: [] }).then(() => console.log('read'), (e) => console.log(e.code + ': ' + e.message));`,
    });
    try {
      const result = spawnSync(process.execPath, [reader, fifo, dir], {
        encoding: 'utf8',
        cwd: dirname(reader),
        timeout: 20_000,
      });
      expect(result.signal).toBeNull();
      expect(result.stdout.trim()).toBe(
        `SECRET_INVALID: grant secret ${fifo} is a FIFO (named pipe), not a regular file; nothing was read from it`,
      );
    } finally {
      rmSync(dirname(reader), { recursive: true, force: true });
    }
  });

  it('refuses a socket and a character device', async () => {
    const socket = join(dir, 'socket.secret');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(await refusal(socket)).toBe(`SECRET_INVALID: grant secret ${socket} is a socket, not a regular file`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const device = join(dir, 'zero.secret');
    const made = spawnSync('mknod', [device, 'c', '1', '5'], { encoding: 'utf8' }); // /dev/zero's numbers: root only
    if (made.status !== 0)
      return console.log(`[grant-secret] the device case is skipped: mknod failed (${made.stderr.trim()})`);
    expect(await refusal(device)).toBe(
      `SECRET_INVALID: grant secret ${device} is a character device, not a regular file; nothing was read from it`,
    );
  });

  it("refuses a symlink, whether it leads out of the roots or to another consumer's secret inside them", async () => {
    symlinkSync(join(elsewhere, 'out.secret'), join(dir, 'out-link.secret'));
    symlinkSync(join(dir, 'other.secret'), join(dir, 'in-link.secret'));
    expect(await refusal(join(dir, 'out-link.secret'))).toBe(
      `SECRET_INVALID: grant secret ${join(dir, 'out-link.secret')} is a symbolic link (to ${join(elsewhere, 'out.secret')}); a grant secret is a regular file, not a link to one`,
    );
    expect(await refusal(join(dir, 'in-link.secret'))).toMatch(
      /is a symbolic link \(to .*other\.secret\); a grant secret is a regular file/,
    );
    expect(await refusal(join(dir, 'other.secret'))).toBe('read');
  });

  it('refuses a file with a second name (a hard link), under either name', async () => {
    linkSync(join(dir, 'other.secret'), join(dir, 'hard.secret'));
    try {
      for (const name of ['hard.secret', 'other.secret']) {
        expect(await refusal(join(dir, name))).toBe(
          `SECRET_INVALID: grant secret ${join(dir, name)} has 2 names (hard links); a grant secret has one, or another consumer's secret could be read through it`,
        );
      }
    } finally {
      rmSync(join(dir, 'hard.secret'));
    }
    expect(await refusal(join(dir, 'other.secret'))).toBe('read');
  });

  it('judges where the opened file really is, at each read: a directory symlink filled in later, out or into another provider', async () => {
    const later = join(dir, 'later');
    mkdirSync(later);
    writeFileSync(join(later, 'out.secret'), 'a-password-in-place\n');
    writeFileSync(join(later, 'billing.secret'), 'a-password-in-place\n');
    expect(await refusal(join(later, 'out.secret'))).toBe('read');
    rmSync(later, { recursive: true });
    symlinkSync(elsewhere, later);
    expect(await refusal(join(later, 'out.secret'))).toBe(
      `SECRET_INVALID: grant secret ${join(later, 'out.secret')} is really ${join(elsewhere, 'out.secret')}, outside the contributions file's directory (give the provider a secretsRoot to allow another); nothing was read from it`,
    );
    rmSync(later);
    symlinkSync(ledger, later);
    expect(await refusal(join(later, 'billing.secret'))).toBe(
      `SECRET_INVALID: grant secret ${join(later, 'billing.secret')} is really ${join(ledger, 'billing.secret')}, in ${ledger}, provider ledger's secretsRoot: no grant secret of one provider may be in another's directory; nothing was read from it`,
    );
    expect(await refusal(join(ledger, 'billing.secret'))).toMatch(/ is in .*ledger, provider ledger's secretsRoot: /);
    // nor may the ledger read it there, inside the cache's directory: where two providers' roots meet, neither's
    // secrets are
    const ledgers: SecretRoots = {
      own: [{ field: 'secretsRoot', path: ledger }],
      foreign: [{ provider: 'cache', field: 'contributions', path: dir }],
    };
    expect(await refusal(join(ledger, 'billing.secret'), ledgers)).toMatch(
      / is in .*, provider cache's contributions file's directory: /,
    );
    expect(await refusal(join(ledger, 'billing.secret'), { ...ledgers, foreign: [] })).toBe('read');
  });

  it('reads through a root that is itself a symlink', async () => {
    const alias = join(elsewhere, 'alias');
    symlinkSync(dir, alias);
    expect(
      await refusal(join(alias, 'other.secret'), { own: [{ field: 'secretsRoot', path: alias }], foreign: [] }),
    ).toBe('read');
  });

  it('judges a known secret again once where its root really is may have changed (ten seconds on)', async () => {
    const alias = join(elsewhere, 'moving-root');
    symlinkSync(dir, alias);
    const moving: SecretRoots = { own: [{ field: 'secretsRoot', path: alias }], foreign: [] };
    const path = join(dir, 'other.secret');
    expect(await refusal(path, moving)).toBe('read');
    expect(await refusal(path, moving)).toBe('read'); // known again, its root's real place known
    rmSync(alias);
    symlinkSync(ledger, alias);
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + 11_000);
    try {
      expect(await refusal(path, moving)).toMatch(/^SECRET_INVALID: .* outside /);
    } finally {
      clock.mockRestore();
    }
  });
});

/**
 * A grant secret read once is known again only while nothing the full read judged changed:
 * every change a grant writer can make between two checks is seen at the next read.
 */
import {
  chmodSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import type * as fs from 'node:fs';
import type * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';
import { KnownSecrets, type StatSignature } from '../../../src/secrets/known-secrets.js';
import type { SecretRoots } from '../../../src/secrets/secret-roots.js';

/** Every path `readGrantSecret` opens, in order: a file known again is not among them. */
const opened = vi.hoisted(() => [] as string[]);
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const open = ((path: string, ...rest: unknown[]) => {
    opened.push(path);
    return (real.open as (...a: unknown[]) => void)(path, ...rest);
  }) as typeof real.open;
  return { ...real, open, default: { ...real, open } };
});

/** Every path `realpath` resolved, in order: where a root really is, asked once for the reads in flight. */
const resolved = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof fsPromises>();
  const realpath = ((path: string, ...rest: unknown[]) => {
    resolved.push(path);
    return (real.realpath as (...a: unknown[]) => Promise<string>)(path, ...rest);
  }) as typeof real.realpath;
  return { ...real, realpath, default: { ...real, realpath } };
});

const dir = mkdtempSync(join(tmpdir(), 'holdfast-known-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const roots: SecretRoots = { own: [{ field: 'contributions', path: dir }], foreign: [] };

async function read(path: string, within: SecretRoots = roots): Promise<string> {
  try {
    return `read ${await readGrantSecret(path, within)}`;
  } catch (error) {
    return isHoldfastError(error) ? error.code : String(error);
  }
}

/** A secret read once (so known), then changed by `change`: what the next read gives. */
async function afterChange(name: string, change: (path: string) => void, within?: SecretRoots): Promise<string> {
  const path = join(dir, name);
  writeFileSync(path, 'first-password\n');
  expect(await read(path)).toBe('read first-password');
  expect(await read(path)).toBe('read first-password');
  change(path);
  return read(path, within);
}

describe('a grant secret read again', () => {
  it('sees a rewrite in place of the same length', async () => {
    expect(await afterChange('same-length.secret', (p) => writeFileSync(p, 'other-password\n'))).toBe(
      'read other-password',
    );
  });

  it('sees a new file renamed over it', async () => {
    expect(
      await afterChange(
        'renamed.secret',
        (p) => (writeFileSync(`${p}.new`, 'renamed-password\n'), renameSync(`${p}.new`, p)),
      ),
    ).toBe('read renamed-password');
  });

  it('refuses it once it has a second name, or is a symlink, or is gone', async () => {
    expect(await afterChange('linked.secret', (p) => linkSync(p, join(dir, 'elsewhere.secret')))).toBe(
      'SECRET_INVALID',
    );
    writeFileSync(join(dir, 'target.secret'), 'target-password\n');
    expect(
      await afterChange('swapped.secret', (p) => (unlinkSync(p), symlinkSync(join(dir, 'target.secret'), p))),
    ).toBe('SECRET_INVALID');
    expect(await afterChange('gone.secret', (p) => unlinkSync(p))).toBe('SECRET_MISSING');
  });

  it("refuses it once its directory is another provider's root", async () => {
    const sub = join(dir, 'team');
    mkdirSync(sub);
    const foreign: SecretRoots = { own: roots.own, foreign: [{ provider: 'ledger', field: 'secretsRoot', path: sub }] };
    expect(await afterChange('team/shared.secret', () => undefined, foreign)).toBe('SECRET_INVALID');
  });
});

describe('a grant secret known', () => {
  it('is not opened again while its file is unchanged, and is read again once it changes', async () => {
    const path = join(dir, 'opened.secret');
    writeFileSync(path, 'opened-password\n');
    const opens = () => opened.filter((p) => p === path).length;
    expect(await read(path)).toBe('read opened-password');
    expect(await read(path)).toBe('read opened-password');
    expect(await read(path)).toBe('read opened-password');
    expect(opens()).toBe(1);
    writeFileSync(path, 'changed-password\n');
    expect(await read(path)).toBe('read changed-password');
    expect(await read(path)).toBe('read changed-password');
    expect(opens()).toBe(2);
  });
});

describe('where a root really is', () => {
  it('is resolved once for the reads in flight, not once for each', async () => {
    const root = join(dir, 'crowd');
    mkdirSync(root);
    const paths = Array.from({ length: 20 }, (_, i) => join(root, `c${i}.secret`));
    for (const path of paths) writeFileSync(path, `crowd-password-${path.length}\n`);
    const within: SecretRoots = { own: [{ field: 'contributions', path: root }], foreign: [] };
    const reads = await Promise.all(paths.map((path) => read(path, within)));
    expect(reads.every((r) => r.startsWith('read crowd-password-'))).toBe(true);
    expect(resolved.filter((p) => p === root)).toHaveLength(1);
  });
});

describe('the secrets known', () => {
  it('are at most their bound, the least recently used let go first', () => {
    const signature = (n: number): StatSignature => ({
      dev: 1n,
      ino: BigInt(n),
      size: 9n,
      mode: 0o100600n,
      uid: 0n,
      gid: 0n,
      mtimeNs: 5n,
      ctimeNs: 5n,
    });
    const s = signature(1);
    const known = new KnownSecrets(2);
    known.set('a', s, 'r', 'pa');
    known.set('b', s, 'r', 'pb');
    expect(known.get('a', s, 'r')).toBe('pa');
    known.set('c', s, 'r', 'pc');
    expect([known.get('a', s, 'r'), known.get('b', s, 'r'), known.get('c', s, 'r'), known.size]).toEqual([
      'pa',
      undefined,
      'pc',
      2,
    ]);
    expect(known.get('a', signature(2), 'r')).toBeUndefined();
    expect(known.get('c', { ...s, ctimeNs: 6n }, 'r')).toBeUndefined();
  });
});

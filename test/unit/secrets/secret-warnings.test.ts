/**
 * The warning at a grant secret's first read: once per file (not per read), again after it was sound, never the secret.
 */
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';
import type { SecretRoots } from '../../../src/secrets/secret-roots.js';
import { SecretWarnings } from '../../../src/secrets/secret-warnings.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-warned-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const roots: SecretRoots = { own: [{ field: 'contributions', path: dir }], foreign: [] };

function watched(): { said: Array<{ fields: object; message: string }>; warnings: SecretWarnings } {
  const said: Array<{ fields: object; message: string }> = [];
  return {
    said,
    warnings: new SecretWarnings({
      warn: ((fields: object, message: string) => said.push({ fields, message })) as never,
    }),
  };
}

let tick = Date.now() / 1000;
/** Written (with a modification time of its own, so that the next read is a full one, not one known again). */
function rewrite(path: string, text: string): void {
  writeFileSync(path, text);
  tick += 10;
  utimesSync(path, tick, tick);
}

describe('the warning at a grant secret’s first read', () => {
  it('is said once per file, however often it is read (fully or known again), and names the file and the finding, never the secret', async () => {
    const { said, warnings } = watched();
    const path = join(dir, 'spaced.secret');
    rewrite(path, 'Qx7-secret-value \n');
    for (let i = 0; i < 3; i++) expect(await readGrantSecret(path, roots, warnings.heed)).toBe('Qx7-secret-value ');
    for (let i = 0; i < 3; i++) {
      rewrite(path, i % 2 ? 'Qx7-secret-value \n' : 'Qx7-other-value \n');
      await readGrantSecret(path, roots, warnings.heed);
    }
    expect(said).toHaveLength(1);
    expect(said[0]!.message).toBe(
      `grant secret ${path} may not be what its writer meant: it ends in a space or tab before its line ends: the password includes it (byte 16; used as it is: a warning); rewrite it as one line holding the password alone`,
    );
    expect(said[0]!.fields).toEqual({ path, findings: ['trailing-whitespace'] });
    expect(JSON.stringify(said)).not.toContain('Qx7');
  });

  it('is said again for a file that was sound in between, and never for a sound one', async () => {
    const { said, warnings } = watched();
    const path = join(dir, 'crlf.secret');
    rewrite(path, 'a-long-password\r\n');
    await readGrantSecret(path, roots, warnings.heed);
    rewrite(path, 'a-long-password\n');
    await readGrantSecret(path, roots, warnings.heed);
    rewrite(path, 'a-long-password\r\n');
    await readGrantSecret(path, roots, warnings.heed);
    expect(said.map((s) => (s.fields as { findings: string[] }).findings)).toEqual([['crlf'], ['crlf']]);
  });

  it('keeps at most its bound of files', () => {
    const said: string[] = [];
    const small = new SecretWarnings({ warn: (fields: { path: string }) => said.push(fields.path) }, 2);
    const finding = [{ kind: 'crlf' as const, offset: 8, refused: false }];
    for (const p of ['a', 'b', 'c', 'a']) small.heed(p, finding);
    // `a`, the oldest, was let go when `c` came: said again
    expect(said).toEqual(['a', 'b', 'c', 'a']);
  });
});

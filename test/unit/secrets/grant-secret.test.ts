/**
 * Reading grant secrets. The unreadable case runs the reader as `nobody`: this suite runs as
 * root, and root reads every file whatever its mode.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';

const repo = resolve(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'holdfast-grants-'));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Another user may not reach the repository (a clone under a 0700 directory) nor its
 * node_modules, so what `nobody` runs is copied out as plain JavaScript: `entry` (relative to the
 * repository) and every module it imports by a relative path, transpiled into `into` with their
 * layout kept so their `./x.js` imports resolve. Returns the path of `entry`'s `.js` file there.
 */
function transpileForAnyUser(entry: string, into: string): string {
  const writeWorldReadable = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    for (let d = dirname(path); d.startsWith(`${into}/`); d = dirname(d)) chmodSync(d, 0o755); // whatever the umask
    writeFileSync(path, text, { mode: 0o644 });
    chmodSync(path, 0o644);
  };
  const done = new Set<string>();
  writeWorldReadable(join(into, 'package.json'), '{ "type": "module" }\n');
  const pending = [resolve(repo, entry)];
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    if (done.has(source)) continue;
    done.add(source);
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true },
      fileName: source,
    });
    for (const [, specifier] of outputText.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      if (specifier === undefined || specifier.startsWith('node:')) continue;
      if (!specifier.startsWith('.')) throw new Error(`${relative(repo, source)} imports ${specifier}, which another user cannot load from here`);
      pending.push(resolve(dirname(source), specifier.replace(/\.js$/, '.ts')));
    }
    writeWorldReadable(join(into, relative(repo, source)).replace(/\.ts$/, '.js'), outputText);
  }
  return join(into, entry.replace(/\.ts$/, '.js'));
}

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

  it.runIf(process.getuid?.() === 0)('names path, owner, mode and uid when the process may not read it', () => {
    const path = join(dir, 'root-only.secret');
    writeFileSync(path, 'root-only-password\n', { mode: 0o600 });
    chmodSync(path, 0o600);
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const work = mkdtempSync(join(tmpdir(), 'holdfast-as-nobody-'));
    try {
      chmodSync(work, 0o755);
      const module = transpileForAnyUser('src/secrets/grant-secret.ts', work);
      const reader = join(work, 'read.js');
      writeFileSync(
        reader,
        `import { readGrantSecret } from ${JSON.stringify(`./${relative(work, module)}`)};
        readGrantSecret(${JSON.stringify(path)}).then(() => console.log('read'), (e) => console.log(e.code + ': ' + e.message));\n`,
        { mode: 0o644 },
      );
      chmodSync(reader, 0o644);
      const result = spawnSync(process.execPath, [reader], { uid: nobody, gid: nobody, encoding: 'utf8', cwd: work });
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe(`SECRET_UNREADABLE: ${path} (EACCES; owner 0:0, mode 0600; holdfast runs as uid ${nobody} gid ${nobody})`);
      expect(result.stdout).not.toContain('root-only-password');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

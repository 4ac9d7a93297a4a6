/**
 * Reads a grant secret when an effect needs it, and says precisely why when it cannot:
 * missing (a wait), unreadable (a fault: path, owner, mode and this process's uid), or
 * unusable (empty, shorter than {@link MIN_SECRET_LENGTH}, larger than {@link MAX_SECRET_BYTES},
 * more than one line, not text), or no grant secret of this provider's at all: not a regular
 * file (a FIFO, socket, device, directory), a symlink, a file with a second name (a hard link),
 * or a file whose real place is outside the provider's roots or in another provider's. The
 * password itself never appears in what is thrown.
 *
 * Opened `O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY` off the event loop (libuv's thread
 * pool), so that no file can hold the process: a FIFO opens at once and is refused by `fstat`
 * before anything is read. The place is judged on the opened descriptor (`/proc/self/fd`, where
 * there is one), so a directory symlink swapped in after the load cannot lead the read elsewhere.
 */
import { close, constants, fstat, lstat, open, read, readlink, type Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { HoldfastError } from '../errors/holdfast-error.js';
import { KnownSecrets, statSignature } from './known-secrets.js';
import { misplaced, misplacedInWords, resolveRoots, type SecretRoots } from './secret-roots.js';
import { secretFindings, type SecretFinding } from './secret-findings.js';

/**
 * Told of what a full read of an accepted grant secret found its writer may not have meant (`secret-findings.ts`); an
 * empty list: nothing.
 */
export type FindingsHeed = (path: string, findings: readonly SecretFinding[]) => void;

/** Grant secrets shorter than this are refused: they could not be scrubbed from logs. */
export const MIN_SECRET_LENGTH = 8;
/**
 * Grant secrets larger than this (less a trailing newline) are refused: no password is, and a wrong file may be huge.
 */
export const MAX_SECRET_BYTES = 4096;

/**
 * The flags every grant secret is opened with: read only, never waiting (a FIFO, a tty), never through a last-element
 * symlink.
 */
export const GRANT_SECRET_OPEN_FLAGS =
  constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Control characters but the tab: a password of text holds none. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

// the callback API through promisify: half the event-loop time of a FileHandle's (see readGrantSecret)
const openFd = promisify(open);
const fstatFd = promisify(fstat);
const readFd = promisify(read);
const closeFd = promisify(close);
const readLink = promisify(readlink);
const lstatPath = promisify(lstat);

const TOO_LARGE = Symbol('too large');
const NOT_UTF8 = Symbol('not UTF-8');

/** Where a root really is, known for a while: a root is the config author's directory, not a grant writer's file. */
const REAL_ROOT_TTL_MS = 10_000;
const realRoots = new Map<string, { real: string; until: number }>();
/** The secrets read and judged, known again while nothing judged changed. */
const knownSecrets = new KnownSecrets();

/** Where a root really is, when known and fresh: no trip through the thread pool. */
function knownRealRoot(path: string, now: number): string | undefined {
  const known = realRoots.get(path);
  return known && known.until > now ? known.real : undefined;
}

/**
 * Roots being resolved: the checks in flight when a root's time runs out wait for one `realpath`, not one each. Cleared
 * with {@link realRoots}: a resolution begun before is then neither waited for nor kept.
 */
const resolving = new Map<string, Promise<string>>();

async function realRoot(path: string): Promise<string> {
  const known = knownRealRoot(path, Date.now());
  if (known !== undefined) return known;
  const pending = resolving.get(path);
  if (pending !== undefined) return pending;
  const resolved = realpath(path).catch(() => path); // not there (yet): as written
  resolving.set(path, resolved);
  const real = await resolved;
  if (resolving.get(path) === resolved) {
    resolving.delete(path);
    realRoots.set(path, { real, until: Date.now() + REAL_ROOT_TTL_MS });
  }
  return real;
}

/** Forgets where every root really is: each is resolved again. */
function forgetRealRoots(): void {
  realRoots.clear();
  resolving.clear();
  keptRootsKeys = new WeakMap();
}

/** Where the file open on `fd` (opened as `path`) really is: the kernel's name for it, else `realpath`. */
async function realPathOf(fd: number, path: string): Promise<string> {
  if (process.platform === 'linux') {
    const real = await readLink(`/proc/self/fd/${fd}`).catch(() => undefined);
    if (real !== undefined && real.startsWith('/')) return real;
  }
  return realpath(path);
}

/** What a file that is no regular file is, in words. */
function kindOf(s: Stats): string {
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isDirectory()) return 'a directory';
  if (s.isSymbolicLink()) return 'a symbolic link';
  return 'of no known kind';
}

const invalid = (path: string, why: string) => new HoldfastError('SECRET_INVALID', `grant secret ${path} ${why}`);

/**
 * Why the file open as `path`, `s` by `fstat` and really at `real`, is no grant secret of the provider `roots` belong
 * to; undefined when it is one.
 */
async function refusal(path: string, s: Stats, real: string, roots: SecretRoots): Promise<HoldfastError | undefined> {
  if (!s.isFile()) return invalid(path, `is ${kindOf(s)}, not a regular file; nothing was read from it`);
  if (s.nlink > 1) {
    return invalid(
      path,
      `has ${s.nlink} names (hard links); a grant secret has one, or another consumer's secret could be read through it`,
    );
  }
  let where = misplaced(real, await resolveRoots(roots, realRoot));
  if (where) {
    forgetRealRoots(); // a root moved since it was last resolved? judged again before refusing
    where = misplaced(real, await resolveRoots(roots, realRoot));
  }
  if (!where) return undefined;
  return invalid(
    path,
    `${real === path ? 'is' : `is really ${real},`} ${misplacedInWords(where)}; nothing was read from it`,
  );
}

/** Why opening `path` failed, as the error to throw. */
async function openFailure(path: string, error: unknown): Promise<HoldfastError> {
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  if (code === 'ENOENT') return new HoldfastError('SECRET_MISSING', `grant secret ${path} does not exist`);
  if (code === 'ELOOP' || code === 'ENXIO' || code === 'EOPNOTSUPP') {
    // O_NOFOLLOW met a symlink, or a socket (or a device without a driver) cannot be opened
    const s = await lstatPath(path).catch(() => undefined);
    if (s?.isSymbolicLink()) {
      const target = await readLink(path).catch(() => '?');
      return invalid(path, `is a symbolic link (to ${target}); a grant secret is a regular file, not a link to one`);
    }
    if (s && !s.isFile()) return invalid(path, `is ${kindOf(s)}, not a regular file`);
  }
  return new HoldfastError('SECRET_UNREADABLE', await describeRefusal(path, code));
}

/** Up to {@link MAX_SECRET_BYTES} + 3 bytes of the file open on `fd`, of `size` bytes by `fstat`. */
async function readBounded(fd: number, size: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(MAX_SECRET_BYTES + 3);
  let length = 0;
  while (length < buffer.length) {
    const { bytesRead } = await readFd(fd, buffer, length, buffer.length - length, null);
    length += bytesRead;
    if (bytesRead === 0 || length >= size) break; // the end, or all that fstat saw: no trip to learn it is the end
  }
  return buffer.subarray(0, length);
}

/**
 * `bytes` as text, less one trailing newline; {@link TOO_LARGE} beyond {@link MAX_SECRET_BYTES}, {@link NOT_UTF8} when
 * not UTF-8.
 */
function decode(bytes: Buffer): string | typeof TOO_LARGE | typeof NOT_UTF8 {
  let end = bytes.length;
  if (bytes[end - 1] === 0x0a) end -= bytes[end - 2] === 0x0d ? 2 : 1;
  if (end > MAX_SECRET_BYTES) return TOO_LARGE;
  try {
    return utf8.decode(bytes.subarray(0, end));
  } catch {
    return NOT_UTF8;
  }
}

async function describeRefusal(path: string, code: string): Promise<string> {
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  try {
    const s = await stat(path);
    return `${path} (${code}; owner ${s.uid}:${s.gid}, mode ${(s.mode & 0o777).toString(8).padStart(4, '0')}; holdfast runs as uid ${uid} gid ${gid})`;
  } catch {
    return `${path} (${code}; its directory cannot be searched by uid ${uid} gid ${gid})`;
  }
}

/** What the file holds, judged: text of one line, long enough. */
function password(path: string, read: ReturnType<typeof decode>): string {
  if (read === TOO_LARGE) throw invalid(path, `is larger than ${MAX_SECRET_BYTES} bytes; no password is`);
  if (read === NOT_UTF8) throw invalid(path, 'is not text (not UTF-8)');
  if (read.length === 0) throw invalid(path, 'is empty');
  if (read.length < MIN_SECRET_LENGTH)
    throw invalid(path, `holds ${read.length} characters; at least ${MIN_SECRET_LENGTH} are needed`);
  if (/[\r\n]/.test(read)) throw invalid(path, 'holds more than one line');
  if (CONTROL.test(read)) throw invalid(path, 'is not text (it holds control characters)');
  return read;
}

/**
 * The grant secret in `path`, a regular file of one name whose real place is in `roots`' own
 * and in no other provider's, or why not: missing, unreadable (with owner, mode and uid), no
 * grant secret of this provider's (`SECRET_INVALID`, with what it is), or unusable.
 *
 * A secret read and judged before is known again while one `lstat` of its path (and where the
 * roots really are) says nothing changed (`known-secrets.ts`): one system call, on the event loop.
 * Else the full read: five trips through the thread pool (open; fstat beside readlink; read;
 * close), 52 to 58 µs of CPU with 32 in flight on a loaded 2-core machine
 * (`test/bench/grant-secret-read.ts`). Where the roots really are is kept for ten seconds.
 */
export async function readGrantSecret(path: string, roots: SecretRoots, heed?: FindingsHeed): Promise<string> {
  // taken before the read: a file changed while it is read is not known again at the next
  const stat = statSignature(path);
  const where = knownRootsKey(roots) ?? (await rootsKey(roots));
  const known = stat === undefined ? undefined : knownSecrets.get(path, stat, where);
  if (known !== undefined) return known;
  try {
    const bytes = await readBytes(path, roots);
    const read = password(path, decode(bytes));
    // judged on a full read only: a secret known again was heeded when it was read
    heed?.(path, secretFindings(bytes));
    if (stat !== undefined) knownSecrets.set(path, stat, where, read);
    return read;
  } catch (error) {
    knownSecrets.forget(path);
    throw error;
  }
}

/** The roots as written and where they really are (kept {@link REAL_ROOT_TTL_MS}), as one string. */
async function rootsKey(roots: SecretRoots): Promise<string> {
  const paths = [...roots.own, ...roots.foreign].map((root) => root.path);
  const real = await Promise.all(paths.map(realRoot));
  return interned(`${paths.join('\0')}\0\0${real.join('\0')}`);
}

/**
 * {@link knownRootsKey}'s answer for one roots object (a provider's, the same at every check), kept until the first of
 * its real roots' times runs out: the key is not made again at every routine check. Let go with {@link realRoots}.
 */
let keptRootsKeys = new WeakMap<SecretRoots, { key: string; until: number }>();

/** {@link rootsKey} when where every root really is is known and fresh (nearly always); else undefined. */
function knownRootsKey(roots: SecretRoots): string | undefined {
  const now = Date.now();
  const kept = keptRootsKeys.get(roots);
  if (kept !== undefined && kept.until > now) return kept.key;
  const written: string[] = [];
  const real: string[] = [];
  let until = Infinity;
  for (const list of [roots.own, roots.foreign]) {
    for (const root of list) {
      const known = realRoots.get(root.path);
      if (known === undefined || known.until <= now) return undefined;
      until = Math.min(until, known.until);
      written.push(root.path);
      real.push(known.real);
    }
  }
  const key = interned(`${written.join('\0')}\0\0${real.join('\0')}`);
  keptRootsKeys.set(roots, { key, until });
  return key;
}

/** One string per distinct roots key, so that every secret known under it shares it (a few, bounded). */
const rootsKeys = new Map<string, string>();
function interned(key: string): string {
  const known = rootsKeys.get(key);
  if (known !== undefined) return known;
  if (rootsKeys.size >= 64) rootsKeys.clear();
  rootsKeys.set(key, key);
  return key;
}

/**
 * What `holdfast doctor` says of a grant secret: read as {@link readGrantSecret} reads it (and
 * thrown what it throws before reading: missing, unreadable, no grant secret of this provider's),
 * its findings, and why it is refused if it is. Never the password.
 */
export async function inspectGrantSecret(
  path: string,
  roots: SecretRoots,
): Promise<{ findings: SecretFinding[]; refusal: HoldfastError | undefined }> {
  const bytes = await readBytes(path, roots);
  const findings = secretFindings(bytes);
  try {
    password(path, decode(bytes));
    return { findings, refusal: undefined };
  } catch (error) {
    if (error instanceof HoldfastError) return { findings, refusal: error };
    throw error;
  }
}

/** The full read: opened, judged where it really is and what it is, and read (bounded). */
async function readBytes(path: string, roots: SecretRoots): Promise<Buffer> {
  let fd: number;
  try {
    fd = await openFd(path, GRANT_SECRET_OPEN_FLAGS);
  } catch (error) {
    throw await openFailure(path, error);
  }
  let bytes: Buffer;
  try {
    // where it really is: asked of the kernel beside fstat (a file renamed away meanwhile, as written)
    const [s, real] = await Promise.all([fstatFd(fd), realPathOf(fd, path).catch(() => path)]);
    const refused = await refusal(path, s, real, roots);
    if (refused) throw refused;
    if (s.size > MAX_SECRET_BYTES + 2) throw invalid(path, `is larger than ${MAX_SECRET_BYTES} bytes; no password is`);
    bytes = await readBounded(fd, s.size);
  } finally {
    await closeFd(fd).catch(() => undefined);
  }
  return bytes;
}

/**
 * Grant secrets read and judged already, known again by one `lstat` of their path: the routine
 * check reads its consumer's secret at every check, and a full read (open, fstat beside the
 * kernel's name for the file, read, close: five trips through libuv's thread pool) was the
 * largest part of its cost. A secret is known again only while everything the full read judged
 * is unchanged:
 *
 * - the path, not followed at its last element, names the same inode of the same device, still
 *   a regular file of one name, of the same size, mode and owner, with the same modification and
 *   change times to the nanosecond (a write, a rename over it, a chmod, a new hard link, a
 *   symlink put in its place all change one of them);
 * - the provider's roots, as written and where they really are, are the ones it was judged in.
 *
 * Anything else is a full read, judged again. Kept at most {@link MAX_KNOWN} secrets, the least
 * recently used let go first; never written anywhere, never logged.
 */
import { lstat, type BigIntStats } from 'node:fs';
import { promisify } from 'node:util';

/** How many secrets are known at most (about 250 bytes each). */
export const MAX_KNOWN = 100_000;

const lstatBig = promisify(lstat) as (path: string, options: { bigint: true }) => Promise<BigIntStats>;

interface Known {
  /** What `lstat` said of the path when the secret was read. */
  stat: string;
  /** The roots it was judged in (as written and real). */
  roots: string;
  password: string;
}

/**
 * What a secret's `lstat` must still say for it to be known: undefined when the path is no regular file of one name.
 */
export async function statSignature(path: string): Promise<string | undefined> {
  const s = await lstatBig(path, { bigint: true }).catch(() => undefined);
  if (!s || !s.isFile() || s.nlink !== 1n) return undefined;
  return `${s.dev}:${s.ino}:${s.size}:${s.mode}:${s.uid}:${s.gid}:${s.mtimeNs}:${s.ctimeNs}`;
}

export class KnownSecrets {
  private readonly known = new Map<string, Known>();

  constructor(private readonly max = MAX_KNOWN) {}

  /** The secret at `path`, when read and judged with this `stat` signature and these `roots`. */
  get(path: string, stat: string, roots: string): string | undefined {
    const known = this.known.get(path);
    if (!known) return undefined;
    this.known.delete(path);
    if (known.stat !== stat || known.roots !== roots) return undefined;
    this.known.set(path, known); // the most recently used last
    return known.password;
  }

  set(path: string, stat: string, roots: string, password: string): void {
    this.known.delete(path);
    this.known.set(path, { stat, roots, password });
    if (this.known.size > this.max) this.known.delete(this.known.keys().next().value!);
  }

  forget(path: string): void {
    this.known.delete(path);
  }

  get size(): number {
    return this.known.size;
  }
}

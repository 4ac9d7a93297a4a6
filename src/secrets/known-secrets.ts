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
 *
 * The `lstat` is synchronous: it opens nothing, so no kind of file (a FIFO, a device) can hold it,
 * and on the event loop it costs one system call (about 2.5 µs of CPU on a loaded 2-core machine)
 * where a trip through the thread pool cost 7 to 10 (the wake-up of a pool thread and the promise);
 * at every routine check that trip was the largest part of the engine's own time
 * (`test/bench/cpu-profile-top.ts` on the throughput bench's run).
 */
import { lstatSync } from 'node:fs';

/** How many secrets are known at most (about 300 bytes each). */
export const MAX_KNOWN = 100_000;

/** What `lstat` said of a secret's path: everything a change to the file, or a swap of it, changes. */
export interface StatSignature {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mode: bigint;
  uid: bigint;
  gid: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

interface Known {
  /** What `lstat` said of the path when the secret was read. */
  stat: StatSignature;
  /** The roots it was judged in (as written and real). */
  roots: string;
  password: string;
}

/**
 * What a secret's `lstat` must still say for it to be known: undefined when the path is no regular file of one name
 * (or cannot be asked).
 */
export function statSignature(path: string): StatSignature | undefined {
  let s;
  try {
    s = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined; // EACCES on a directory, ENOTDIR…: the full read says why
  }
  if (!s || !s.isFile() || s.nlink !== 1n) return undefined;
  const { dev, ino, size, mode, uid, gid, mtimeNs, ctimeNs } = s;
  return { dev, ino, size, mode, uid, gid, mtimeNs, ctimeNs };
}

/** Whether two signatures are of the same file, unchanged. */
export function sameSignature(a: StatSignature, b: StatSignature): boolean {
  return (
    a.ino === b.ino &&
    a.dev === b.dev &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs &&
    a.mode === b.mode &&
    a.uid === b.uid &&
    a.gid === b.gid
  );
}

export class KnownSecrets {
  private readonly known = new Map<string, Known>();

  constructor(private readonly max = MAX_KNOWN) {}

  /** The secret at `path`, when read and judged with this `stat` signature and these `roots`. */
  get(path: string, stat: StatSignature, roots: string): string | undefined {
    const known = this.known.get(path);
    if (!known) return undefined;
    this.known.delete(path);
    if (!sameSignature(known.stat, stat) || known.roots !== roots) return undefined;
    this.known.set(path, known); // the most recently used last
    return known.password;
  }

  set(path: string, stat: StatSignature, roots: string, password: string): void {
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

/**
 * Reads a file others write (a contributions file) with a bound on its size: a regular file no
 * larger than the bound is read whole; anything else is refused before a byte of it is parsed.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { formatSize } from '../text/size.js';

/** The bound and the setting that sets it, for the message. */
export interface SizeLimit {
  maxBytes: number;
  /** e.g. `sync.contributionsMaxBytes`. */
  setting: string;
}

export type BoundedText = { ok: true; text: string } | { ok: false; problem: string };

const CHUNK = 1024 * 1024;

/**
 * The text of `file` when it is a regular file of at most `limit.maxBytes`. Opened without
 * blocking (a FIFO does not hang the reader), judged by `fstat` before it is read, and read no
 * further than one byte past the bound (a file growing meanwhile is refused too).
 */
export async function readBounded(file: string, limit: SizeLimit): Promise<BoundedText> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return {
      ok: false,
      problem: `${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, problem: `${file}: not a regular file; refused unread` };
    const tooLarge = (size: string) => ({
      ok: false as const,
      problem: `${file}: the file is ${size}, more than ${limit.setting} (${formatSize(limit.maxBytes)}); refused unread`,
    });
    if (stat.size > limit.maxBytes) return tooLarge(formatSize(stat.size));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, limit.maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit.maxBytes) return tooLarge(`at least ${formatSize(total)} (it grew while read)`);
    }
    return { ok: true, text: Buffer.concat(chunks, total).toString('utf8') };
  } catch (error) {
    return {
      ok: false,
      problem: `${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    };
  } finally {
    await handle.close();
  }
}

/**
 * Reads a grant secret when an effect needs it, and says precisely why when it cannot:
 * missing (a wait), unreadable (a fault: path, owner, mode and this process's uid), or
 * unusable (empty, shorter than {@link MIN_SECRET_LENGTH}, larger than {@link MAX_SECRET_BYTES},
 * more than one line, not text). The password itself never appears in what is thrown.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { HoldfastError } from '../errors/holdfast-error.js';

/** Grant secrets shorter than this are refused: they could not be scrubbed from logs. */
export const MIN_SECRET_LENGTH = 8;
/** Grant secrets larger than this (less a trailing newline) are refused: no password is, and a wrong file may be huge. */
export const MAX_SECRET_BYTES = 4096;

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Control characters but the tab: a password of text holds none. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

const TOO_LARGE = Symbol('too large');
const NOT_UTF8 = Symbol('not UTF-8');

/** One buffer for every read: reads are synchronous, so none overlaps another. */
const buffer = Buffer.allocUnsafe(MAX_SECRET_BYTES + 3);

/**
 * The file's text, less one trailing newline; {@link TOO_LARGE} beyond {@link MAX_SECRET_BYTES}
 * (not read beyond that), {@link NOT_UTF8} when it is not UTF-8. Synchronous, as `readSecretFile`: a few
 * bytes read on every check. Throws the fs error.
 */
function readBounded(path: string): string | typeof TOO_LARGE | typeof NOT_UTF8 {
  const fd = openSync(path, 'r');
  let length = 0;
  try {
    if (fstatSync(fd).size > MAX_SECRET_BYTES + 2) return TOO_LARGE;
    for (let n = -1; n !== 0 && length < buffer.length; length += n) n = readSync(fd, buffer, length, buffer.length - length, null);
  } finally {
    closeSync(fd);
  }
  let end = length;
  if (buffer[end - 1] === 0x0a) end -= buffer[end - 2] === 0x0d ? 2 : 1;
  if (end > MAX_SECRET_BYTES) return TOO_LARGE;
  try {
    return utf8.decode(buffer.subarray(0, end));
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

/** The grant secret in `path`, or why not: missing, unreadable (with owner, mode and uid), or unusable. */
export async function readGrantSecret(path: string): Promise<string> {
  let read: ReturnType<typeof readBounded>;
  try {
    read = readBounded(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ENOENT') throw new HoldfastError('SECRET_MISSING', `grant secret ${path} does not exist`);
    if (code === 'EACCES' || code === 'EPERM') {
      throw new HoldfastError('SECRET_UNREADABLE', await describeRefusal(path, code));
    }
    if (code === 'EISDIR') throw new HoldfastError('SECRET_INVALID', `grant secret ${path} is a directory`);
    throw new HoldfastError('SECRET_UNREADABLE', await describeRefusal(path, code));
  }
  if (read === TOO_LARGE) throw new HoldfastError('SECRET_INVALID', `grant secret ${path} is larger than ${MAX_SECRET_BYTES} bytes; no password is`);
  if (read === NOT_UTF8) throw new HoldfastError('SECRET_INVALID', `grant secret ${path} is not text (not UTF-8)`);
  const password = read;
  if (password.length === 0) throw new HoldfastError('SECRET_INVALID', `grant secret ${path} is empty`);
  if (password.length < MIN_SECRET_LENGTH) {
    throw new HoldfastError('SECRET_INVALID', `grant secret ${path} holds ${password.length} characters; at least ${MIN_SECRET_LENGTH} are needed`);
  }
  if (/[\r\n]/.test(password)) throw new HoldfastError('SECRET_INVALID', `grant secret ${path} holds more than one line`);
  if (CONTROL.test(password)) throw new HoldfastError('SECRET_INVALID', `grant secret ${path} is not text (it holds control characters)`);
  return password;
}

/**
 * Reads a grant secret when an effect needs it, and says precisely why when it cannot:
 * missing (a wait), unreadable (a fault: path, owner, mode and this process's uid), or
 * unusable. The password itself never appears in what is thrown.
 */
import { stat } from 'node:fs/promises';
import { HoldfastError } from '../errors/holdfast-error.js';
import { readSecretFile } from './secret-file.js';

/** Grant secrets shorter than this are refused: they could not be scrubbed from logs. */
export const MIN_SECRET_LENGTH = 8;

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
  let password: string;
  try {
    password = readSecretFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ENOENT') throw new HoldfastError('SECRET_MISSING', `grant secret ${path} does not exist`);
    if (code === 'EACCES' || code === 'EPERM') {
      throw new HoldfastError('SECRET_UNREADABLE', await describeRefusal(path, code));
    }
    if (code === 'EISDIR') throw new HoldfastError('SECRET_INVALID', `grant secret ${path} is a directory`);
    throw new HoldfastError('SECRET_UNREADABLE', await describeRefusal(path, code));
  }
  if (password.length < MIN_SECRET_LENGTH) {
    throw new HoldfastError('SECRET_INVALID', `grant secret ${path} holds ${password.length} characters; at least ${MIN_SECRET_LENGTH} are needed`);
  }
  if (/[\r\n]/.test(password)) throw new HoldfastError('SECRET_INVALID', `grant secret ${path} holds more than one line`);
  return password;
}

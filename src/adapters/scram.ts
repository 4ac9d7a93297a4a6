/**
 * SCRAM (RFC 5802, RFC 7677) computed locally: what PostgreSQL and MongoDB keep of a password
 * (a salt, an iteration count, the StoredKey and the ServerKey), so that holdfast can send a
 * verifier instead of the password and compare what a server keeps with a grant secret.
 * Both servers apply SASLprep to the password first where it applies.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { saslprep } from '@mongodb-js/saslprep';

export type ScramHash = 'sha1' | 'sha256';

/** What a server keeps of a password. Keys and salt are raw bytes. */
export interface ScramKeys {
  hash: ScramHash;
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

const KEY_BYTES: Record<ScramHash, number> = { sha1: 20, sha256: 32 };

/** SASLprep, or the password as it is where SASLprep refuses it (PostgreSQL does the same). */
export function prepared(password: string): string {
  try {
    return saslprep(password);
  } catch {
    return password;
  }
}

const pbkdf2Async = promisify(pbkdf2);

/**
 * The keys of `password` (already prepared as the server prepares it) with this salt and
 * count. PBKDF2 is deliberately expensive (4096 to 15,000 rounds: milliseconds), so it runs on
 * libuv's thread pool, not on the event loop the checks share.
 */
export async function scramKeys(
  hash: ScramHash,
  password: string,
  salt: Buffer,
  iterations: number,
): Promise<ScramKeys> {
  const salted = await pbkdf2Async(password, salt, iterations, KEY_BYTES[hash], hash);
  const clientKey = createHmac(hash, salted).update('Client Key').digest();
  return {
    hash,
    iterations,
    salt,
    storedKey: createHash(hash).update(clientKey).digest(),
    serverKey: createHmac(hash, salted).update('Server Key').digest(),
  };
}

/** Whether two sets of keys are the same password (compared in constant time). */
export function sameKeys(a: ScramKeys, b: ScramKeys): boolean {
  return (
    a.hash === b.hash &&
    a.storedKey.length === b.storedKey.length &&
    timingSafeEqual(a.storedKey, b.storedKey) &&
    a.serverKey.length === b.serverKey.length &&
    timingSafeEqual(a.serverKey, b.serverKey)
  );
}

/** A fresh random salt. */
export function newSalt(bytes = 16): Buffer {
  return randomBytes(bytes);
}

/**
 * The strings in which these keys may show (base64 and hex of each key): for the scrubber of a
 * call that handles them. The salt is public; it is not among them.
 */
export function keyForms(keys: ScramKeys): string[] {
  return [keys.storedKey, keys.serverKey].flatMap((k) => [k.toString('base64'), k.toString('hex')]);
}

/** PostgreSQL's verifier text: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64). */
export function postgresVerifier(keys: ScramKeys): string {
  const b64 = (b: Buffer) => b.toString('base64');
  return `SCRAM-SHA-256$${keys.iterations}:${b64(keys.salt)}$${b64(keys.storedKey)}:${b64(keys.serverKey)}`;
}

/** Reads a PostgreSQL SCRAM-SHA-256 verifier; null for anything else (an md5 hash, no password). */
export function parsePostgresVerifier(text: string | null): ScramKeys | null {
  const match = /^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(text ?? '');
  if (!match) return null;
  const [, iterations, salt, storedKey, serverKey] = match as unknown as [string, string, string, string, string];
  return {
    hash: 'sha256',
    iterations: Number(iterations),
    salt: Buffer.from(salt, 'base64'),
    storedKey: Buffer.from(storedKey, 'base64'),
    serverKey: Buffer.from(serverKey, 'base64'),
  };
}

/**
 * The password MongoDB's SCRAM-SHA-1 runs through PBKDF2: the hex MD5 of `user:mongo:password`
 * (no SASLprep). SCRAM-SHA-256 uses the SASLprep'd password itself.
 */
export function mongoSha1Password(user: string, password: string): string {
  return createHash('md5').update(`${user}:mongo:${password}`).digest('hex');
}

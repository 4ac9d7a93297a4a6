/** The keyed fingerprint of a secret: what the record keeps to notice a rotation. */
import { createHmac } from 'node:crypto';
import { MAX_KNOWN } from './known-secrets.js';

export function secretFingerprint(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(secret).digest('hex');
}

/**
 * The fingerprints of the secrets read at each path, under one key: a routine check fingerprints
 * its consumer's secret at every check, and the secret is nearly always the one it read last
 * time (`known-secrets.ts` gives it back while its file is unchanged). One per path, the last
 * read: a secret that changes replaces its path's, so no secret is kept longer here than there.
 * At most {@link MAX_KNOWN}, the oldest let go first.
 */
export class Fingerprints {
  private readonly byPath = new Map<string, { secret: string; mac: string }>();

  constructor(
    private readonly key: Buffer,
    private readonly max = MAX_KNOWN,
  ) {}

  /** {@link secretFingerprint} of `secret`, read at `path`. */
  of(path: string, secret: string): string {
    const known = this.byPath.get(path);
    if (known !== undefined && known.secret === secret) return known.mac;
    const mac = secretFingerprint(this.key, secret);
    if (known === undefined && this.byPath.size >= this.max) this.byPath.delete(this.byPath.keys().next().value!);
    this.byPath.set(path, { secret, mac });
    return mac;
  }

  get size(): number {
    return this.byPath.size;
  }
}

const fingerprints = new WeakMap<Buffer, Fingerprints>();

/** {@link secretFingerprint} of `secret`, read at `path`, under `key`: computed once per secret a path holds. */
export function fingerprintAt(key: Buffer, path: string, secret: string): string {
  let found = fingerprints.get(key);
  if (!found) fingerprints.set(key, (found = new Fingerprints(key)));
  return found.of(path, secret);
}

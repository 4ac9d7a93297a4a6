/** The keyed fingerprint of a secret: what the record keeps to notice a rotation. */
import { createHmac } from 'node:crypto';

export function secretFingerprint(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(secret).digest('hex');
}

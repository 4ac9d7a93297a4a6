/**
 * Lower-case hex SHA-256 of `text` (UTF-8): what Redis is sent for a password, and what tells one spec from another.
 */
import { createHash } from 'node:crypto';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

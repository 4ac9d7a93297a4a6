/**
 * Seals on what a job may not have been written by holdfast: the desired spec a `desired` job
 * carries, and the ticket a wait job's routine check runs on. A seal is an HMAC-SHA256 under a
 * key derived (HKDF) from the fingerprint key, over the consumer's key, what places the job in
 * time (`at`; the revision and the wait) and the payload, so that whoever can write the queue's
 * Redis, but not read holdfast's fingerprint key, can neither make a job nor move one to
 * another consumer or another time. Derived, not the fingerprint key itself: the records keep
 * HMACs of grant secrets under that key, which must not double as seals.
 *
 * A desired spec is sealed in its canonical JSON. A ticket is sealed in `JSON.stringify`'s
 * text, which the round trip through the queue (BullMQ stores `JSON.stringify(data)` and gives
 * workers `JSON.parse` of it) gives back unchanged: that costs the routine check a third of the
 * canonical form's time.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { WaitName } from '../../machines/machine-step.js';
import { canonicalJson } from '../text/canonical-json.js';
import type { DesiredSpec } from '../store/consumer-record.js';

const SEAL_BYTES = 32;

export class JobSeal {
  private readonly key: Buffer;

  constructor(fingerprintKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', fingerprintKey, 'holdfast', 'job seal v1', SEAL_BYTES));
  }

  /** The seal of a `desired` job: `desired` as the sync read it at `at` (null: no longer declared). */
  desired(key: string, at: number, desired: DesiredSpec | null): string {
    return this.mac(`desired\n${key}\n${at}\n${canonicalJson(desired)}`);
  }

  /**
   * The seal of a wait's job: its ticket at `rev`. Its text begins with the wait job's former kind, `timer`, kept so
   * that a ticket an earlier release sealed is still good (`src/schedule/job-data.ts` reads that job's former kind).
   */
  ticket(key: string, rev: number, wait: WaitName, ticket: unknown): string {
    return this.mac(`timer\n${key}\n${rev}\n${wait}\n${JSON.stringify(ticket)}`);
  }

  /** Whether a `desired` job, as a worker got it, carries the seal of what it carries. */
  sealsDesired(job: { key: string; at: number; desired: DesiredSpec | null; seal?: unknown }): boolean {
    return JobSeal.matches(job.seal, this.desired(job.key, job.at, job.desired));
  }

  /** Whether a wait job, as a worker got it, carries the seal of its ticket. */
  sealsTicket(job: { key: string; rev: number; wait: WaitName; ticket: unknown; seal?: unknown }): boolean {
    return JobSeal.matches(job.seal, this.ticket(job.key, job.rev, job.wait, job.ticket));
  }

  /** Whether `given` (what a job carries, of any type) is the seal `expected` would make; in constant time. */
  static matches(given: unknown, expected: string): boolean {
    if (typeof given !== 'string' || given.length !== expected.length) return false;
    return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }
}

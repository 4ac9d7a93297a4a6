/**
 * Seals on what the status, `/healthz`, the metrics, the checks and the desired-state sync conclude from the queue's
 * Redis: each consumer's noted state and brief, its check memo, and a person's confirmation of held-back removals.
 * Whoever can write that Redis (a tenant whose login reaches it, anyone with its password) but cannot read holdfast's
 * fingerprint key can delete these values or put back one holdfast wrote earlier, but not make one: a value whose seal
 * fails reads as absent (unknown, so red where the status needs it), and is counted as seen.
 *
 * A seal is an HMAC-SHA256 (node:crypto), cut to 128 bits, under a key derived (HKDF) from the fingerprint key apart
 * from the jobs' seals (`job-seal.ts`), over the value's kind, its field (the consumer's key, or the provider) and its
 * text. It is appended to the text as ` ~<seal>`: every value keeps its first tokens where it had them (a state's
 * `<token> <revision>`, which the noting script reads).
 */
import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { JobSeal } from './job-seal.js';

/** What a sealed value is; a seal of one kind never opens another. */
export type NoteKind = 'state' | 'brief' | 'memo' | 'removals';

const KEY_BYTES = 32;
/** 16 bytes in base64url. */
const SEAL_CHARS = 22;
const MARK = ' ~';

export class NoteSeal {
  /** Made a key object once: an HMAC under it costs a third less than under the bytes (a seal per routine check). */
  private readonly key: KeyObject;
  /** Values seen whose seal failed, by kind, since this process started. */
  readonly unsealedSeen: Record<NoteKind, number> = { state: 0, brief: 0, memo: 0, removals: 0 };

  constructor(
    fingerprintKey: Buffer,
    /** Told of each value whose seal fails (the engine logs the first of each kind and counts them). */
    private readonly onUnsealed?: (kind: NoteKind, field: string) => void,
  ) {
    this.key = createSecretKey(Buffer.from(hkdfSync('sha256', fingerprintKey, 'holdfast', 'note seal v1', KEY_BYTES)));
  }

  /** `text` with its seal, as `kind` of `field`. */
  seal(kind: NoteKind, field: string, text: string): string {
    return `${text}${MARK}${this.mac(kind, field, text)}`;
  }

  /** The text of a value holdfast sealed as `kind` of `field`; null (counted) when its seal fails, null when absent. */
  open(kind: NoteKind, field: string, raw: string | null | undefined): string | null {
    if (raw === null || raw === undefined || raw === '') return null;
    const text = NoteSeal.textOf(raw);
    if (text !== null && JobSeal.matches(raw.slice(text.length + MARK.length), this.mac(kind, field, text)))
      return text;
    this.unsealedSeen[kind]++;
    this.onUnsealed?.(kind, field);
    return null;
  }

  /** The text before a seal's place (null when `raw` has none); not a check of the seal. */
  static textOf(raw: string): string | null {
    const at = raw.length - SEAL_CHARS - MARK.length;
    return at >= 0 && raw.startsWith(MARK, at) ? raw.slice(0, at) : null;
  }

  private mac(kind: NoteKind, field: string, text: string): string {
    return createHmac('sha256', this.key)
      .update(`${kind}\n${field}\n${text}`)
      .digest()
      .subarray(0, 16)
      .toString('base64url');
  }
}

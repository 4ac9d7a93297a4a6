/**
 * Removes secrets from text before it leaves the process. A scrubber knows the admin
 * passwords for the life of the process; an effect extends it with the one grant secret it
 * read (`with`), so memory does not grow with the number of consumers.
 */
import { sha256Hex } from '../secrets/sha256.js';

export const REDACTED = '[redacted]';
/** Shorter strings are not scrubbed (they would redact ordinary words); grant secrets must be longer. */
export const MIN_SCRUBBED_LENGTH = 4;

/** The forms in which a secret may appear: as is, JSON-escaped, and as its SHA-256 (what Redis is sent). */
function formsOf(secret: string): string[] {
  const forms = [secret, JSON.stringify(secret).slice(1, -1), sha256Hex(secret)];
  return [...new Set(forms)].filter((form) => form.length >= MIN_SCRUBBED_LENGTH);
}

export class Scrubber {
  private readonly forms: string[];

  constructor(secrets: Iterable<string> = [], private readonly parent?: Scrubber) {
    this.forms = [...secrets].flatMap(formsOf).sort((a, b) => b.length - a.length);
  }

  /** A scrubber that also removes `secrets`. */
  with(...secrets: string[]): Scrubber {
    return new Scrubber(secrets, this);
  }

  /** Adds secrets for the life of this scrubber (admin passwords read at start-up). */
  add(...secrets: string[]): void {
    const known = new Set(this.forms);
    this.forms.push(...secrets.flatMap(formsOf).filter((form) => !known.has(form) && known.add(form)));
    this.forms.sort((a, b) => b.length - a.length);
  }

  scrub(text: string): string {
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return this.parent ? this.parent.scrub(out) : out;
  }

  /** An error's message (and its causes'), scrubbed: safe for a log, a record or the status. */
  describe(error: unknown): string {
    const parts: string[] = [];
    let current: unknown = error;
    for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
      const message = current instanceof Error ? current.message : typeof current === 'string' ? current : JSON.stringify(current);
      if (message && !parts.includes(message)) parts.push(message);
      current = current instanceof Error ? current.cause : undefined;
    }
    return this.scrub(parts.join(': ') || 'unknown error');
  }
}

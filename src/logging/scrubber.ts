/**
 * Removes secrets from text before it leaves the process. A scrubber knows the admin
 * passwords for the life of the process; an effect extends it with the one grant secret it
 * read (`with`), so memory does not grow with the number of consumers.
 *
 * A secret is removed as is and JSON-escaped. The other forms a backend's traffic may carry
 * (Redis is sent a password's SHA-256) are each adapter's to declare: {@link Scrubber.learn}
 * registers them on a root scrubber and every scrubber made from it by `with` applies them.
 */

export const REDACTED = '[redacted]';
/** Shorter strings are not scrubbed (they would redact ordinary words); grant secrets must be longer. */
export const MIN_SCRUBBED_LENGTH = 4;

/** The forms of a password a backend derives from it alone (e.g. its SHA-256); cheap, pure. */
export type SecretForms = (secret: string) => readonly string[];

function formsOf(secret: string, derivations: Iterable<SecretForms>): string[] {
  const forms = [secret, JSON.stringify(secret).slice(1, -1)];
  for (const derive of derivations) forms.push(...derive(secret));
  return [...new Set(forms)].filter((form) => form.length >= MIN_SCRUBBED_LENGTH);
}

export class Scrubber {
  private forms: string[];
  /** The secrets given to this scrubber, kept to derive their forms again when a derivation is learned. */
  private readonly secrets: string[];
  /** Derivations learned by this (root) scrubber; children use their root's. */
  private readonly derivations = new Set<SecretForms>();

  constructor(
    secrets: Iterable<string> = [],
    private readonly parent?: Scrubber,
  ) {
    this.secrets = [...secrets];
    this.forms = this.derive(this.secrets);
  }

  /** A scrubber that also removes `secrets` (in every form the root has learned) and `forms` as given. */
  with(...secrets: string[]): Scrubber {
    return new Scrubber(secrets, this);
  }

  /**
   * A scrubber that also removes these literal strings, each as is and JSON-escaped (e.g. a
   * SCRAM verifier an adapter computed with a salt only it knows).
   */
  withForms(forms: readonly string[]): Scrubber {
    const child = new Scrubber([], this);
    child.forms = [...new Set(forms.flatMap((form) => [form, JSON.stringify(form).slice(1, -1)]))]
      .filter((form) => form.length >= MIN_SCRUBBED_LENGTH)
      .sort((a, b) => b.length - a.length);
    return child;
  }

  /** Adds secrets for the life of this scrubber (admin passwords read at start-up). */
  add(...secrets: string[]): void {
    this.secrets.push(...secrets.filter((s) => !this.secrets.includes(s)));
    this.forms = this.derive(this.secrets);
  }

  /**
   * Registers a backend's derived forms of a password on the root scrubber: every secret
   * known now or given later (here or to a child) is also removed in those forms.
   */
  learn(...derivations: SecretForms[]): void {
    const root = this.root();
    for (const derive of derivations) root.derivations.add(derive);
    this.rederive();
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
      const message =
        current instanceof Error ? current.message : typeof current === 'string' ? current : JSON.stringify(current);
      if (message && !parts.includes(message)) parts.push(message);
      current = current instanceof Error ? current.cause : undefined;
    }
    return this.scrub(parts.join(': ') || 'unknown error');
  }

  private root(): Scrubber {
    return this.parent ? this.parent.root() : this;
  }

  /** Derives this scrubber's and its parents' forms again, keeping the ones it had. */
  private rederive(): void {
    this.forms = this.derive(this.secrets, this.forms);
    this.parent?.rederive();
  }

  private derive(secrets: readonly string[], keep: readonly string[] = []): string[] {
    const derivations = this.root().derivations;
    return [...new Set([...keep, ...secrets.flatMap((s) => formsOf(s, derivations))])].sort(
      (a, b) => b.length - a.length,
    );
  }
}

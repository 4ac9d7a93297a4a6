/**
 * The warning said at the first read of a grant secret whose bytes hold what its writer probably
 * did not mean (`secret-findings.ts`): once per file while it stays so, not at every read. A file
 * read again without findings is forgotten, so that a later bad write is said again. Remembers at
 * most {@link MAX_WARNED} files (the oldest let go first). Names the file and the findings, never
 * the secret.
 */
import type { Logger } from '../logging/logger.js';
import { findingInWords, type SecretFinding } from './secret-findings.js';

/** How many files are remembered as warned at most. */
export const MAX_WARNED = 100_000;

export class SecretWarnings {
  private readonly warned = new Set<string>();

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly max = MAX_WARNED,
  ) {}

  /** What a full read of the secret at `path` found (see `FindingsHeed`). */
  readonly heed = (path: string, findings: readonly SecretFinding[]): void => {
    if (findings.length === 0) {
      this.warned.delete(path);
      return;
    }
    if (this.warned.has(path)) return;
    this.warned.add(path);
    if (this.warned.size > this.max) this.warned.delete(this.warned.values().next().value!);
    const words = findings.map(findingInWords).join('; ');
    this.log.warn(
      { path, findings: findings.map((f) => f.kind) },
      `grant secret ${path} may not be what its writer meant: it ${words}; rewrite it as one line holding the password alone`,
    );
  };
}

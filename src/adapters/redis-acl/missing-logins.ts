/**
 * The consumers one node of a backend lacks now, as this process's checks and applies learned
 * them (Redis does not replicate ACL users: a replica restarted empty, or one where the admin may
 * not write, lacks consumers its master holds).
 *
 * - a light check refused there (`AUTH` answered `WRONGPASS`) marks the login `auth`;
 * - a deep check that found it not held there marks it `rules` (missing, rules or password differ);
 * - an apply that failed there (or a deep check that could not be made there) marks it `failed`, with the backend's
 * error: the most telling reason;
 * - an apply that succeeded there, a deep check that found it held there, or its removal there,
 *   clears it; a light check that authenticates there clears an `auth` mark only (the rules may
 *   still differ, which a light check cannot see).
 *
 * Bounded: at most {@link MISSING_TRACKED} logins per node (more are counted as at least that
 * many), and a mark not confirmed within `ttlMs` is forgotten (a consumer no longer checked here,
 * suspended or moved to another provider, does not stay counted for ever).
 */

/** How a login was found missing on a node, from the least to the most telling. */
export type MissingKind = 'auth' | 'rules' | 'failed';

/** At most this many logins are remembered per node. */
export const MISSING_TRACKED = 100_000;

/** What a status line says of one mark, at most (the backend's error is cut). */
const WHY_CHARS = 300;

const RANK: Record<MissingKind, number> = { auth: 0, rules: 1, failed: 2 };

interface Mark {
  kind: MissingKind;
  why: string;
  at: number;
}

export class MissingLogins {
  private readonly marks = new Map<string, Mark>();
  /** Whether a mark was refused for want of room since the set was last found under its bound. */
  private overflow = false;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly bound = MISSING_TRACKED,
  ) {}

  /** `login` found missing here: kept with the more telling of its old and new reason. */
  mark(login: string, kind: MissingKind, why: string): void {
    const at = this.now();
    const known = this.marks.get(login);
    if (known !== undefined && RANK[known.kind] > RANK[kind] && at - known.at < this.ttlMs) {
      known.at = at; // confirmed missing; its better reason stays
      return;
    }
    if (known === undefined && this.marks.size >= this.bound) {
      this.forgetStale(at);
      if (this.marks.size >= this.bound) {
        this.overflow = true;
        return;
      }
    }
    this.marks.delete(login); // the newest last: the reason said is the latest
    this.marks.set(login, { kind, why: why.length > WHY_CHARS ? `${why.slice(0, WHY_CHARS)}…` : why, at });
  }

  /** Whether `login` is missing here now. */
  has(login: string): boolean {
    return this.marks.has(login);
  }

  /** `login` found held here (or removed): no longer missing. `onlyKind`: cleared only when marked so. */
  clear(login: string, onlyKind?: MissingKind): void {
    if (onlyKind !== undefined && this.marks.get(login)?.kind !== onlyKind) return;
    this.marks.delete(login);
  }

  /** How many logins are missing here now; `atLeast` when more were found than remembered. */
  count(): { missing: number; atLeast: boolean } {
    this.forgetStale(this.now());
    if (this.marks.size < this.bound) this.overflow = false;
    return { missing: this.marks.size, atLeast: this.overflow };
  }

  /**
   * Why, in words: the latest failure there (an apply, a deep check) when there is one, else the latest mark; undefined
   * when none is missing.
   */
  why(): string | undefined {
    let latest: Mark | undefined;
    let failed: Mark | undefined;
    for (const mark of this.marks.values()) {
      latest = mark;
      if (mark.kind === 'failed') failed = mark;
    }
    return (failed ?? latest)?.why;
  }

  private forgetStale(at: number): void {
    for (const [login, mark] of this.marks) if (at - mark.at >= this.ttlMs) this.marks.delete(login);
  }
}

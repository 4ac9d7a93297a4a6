/**
 * What `holdfast plan` found, per provider: what a `holdfast run` on the proposed contributions
 * would create, change, remove or refuse, and what a check would heal now. Words and keys only:
 * never a secret (a grant secret is read to compare its fingerprint, and to ask the backend).
 */

export interface PlannedCreate {
  key: string;
  login: string;
  /** Where it is declared, `<file>:<line>`. */
  source: string;
  /** What will slow it (its grant secret missing or unusable: it waits, or is blocked). */
  notes: string[];
}

export interface PlannedChange {
  key: string;
  login: string;
  source: string;
  /** What differs, in words (`spec-diff.ts`). */
  differences: string[];
  notes: string[];
}

export interface PlannedRemovals {
  /** The consumers no longer declared, with their logins. */
  consumers: Array<{ key: string; login: string }>;
  /** Of how many consumers delivered now. */
  of: number;
  /** The mass-removal guard would hold the whole change back until a person confirms it. */
  heldBack: boolean;
  /** A person already confirmed exactly this change: it would go through. */
  confirmed: boolean;
  /** The guard in words: what it allows at once. */
  guard: string;
  /** The change's digest as a person names it (`confirm-removals --change`); absent when not held back. */
  change?: string;
  /** The command that would confirm it, once `holdfast run` holds it back; absent when not held back. */
  confirmWith?: string;
  /**
   * The provider's `management` leaves removed consumers' logins on the backend (`observe`, `no-delete`): only their
   * records go.
   */
  leavesLogins: boolean;
}

export interface PlannedRefusal {
  key: string;
  /** Each as `<file>:<line>: <field>: <reason>`, as the loader and the worker's policy check say it. */
  problems: string[];
  /** A consumer applied before keeps its last accepted spec. */
  keepsAccepted: boolean;
}

export interface Drifted {
  key: string;
  login: string;
  /** The adapter's reason (`missing`, `password-differs`, `rules-differ`…), and what differs. */
  reason: string;
  detail: string;
  node?: string;
}

/**
 * A consumer whose backend could not be asked (its deep check threw or timed out), or whose grant secret could not be
 * read for it.
 */
export interface NotAsked {
  key: string;
  why: string;
}

export interface ProviderPlan {
  provider: string;
  adapter: string;
  /** The provider's `management`: `manage`, or `observe` / `no-delete` (which leave logins). */
  management: string;
  /** The contributions file planned (a proposed one, or the one in place). */
  file: string;
  /** The file cannot be used at all: every problem; nothing else is planned for this provider. */
  invalid: string[] | null;
  create: PlannedCreate[];
  change: PlannedChange[];
  remove: PlannedRemovals | null;
  refused: PlannedRefusal[];
  drifted: Drifted[];
  notAsked: NotAsked[];
  /** Consumers declared, applied and held as declared: counted, not listed. */
  unchanged: number;
  /** Records this holdfast cannot read (left alone by run too). */
  unreadable: number;
}

export interface PlanReport {
  providers: ProviderPlan[];
  /**
   * 0: nothing would change; 1: something would; 2: something is refused or invalid, or a backend could not be asked.
   */
  exitCode: 0 | 1 | 2;
}

/** The plan's exit code: 2 on anything refused, invalid or not asked; 1 on anything to do; else 0. */
export function planExitCode(providers: readonly ProviderPlan[]): 0 | 1 | 2 {
  if (providers.some((p) => p.invalid !== null || p.refused.length > 0 || p.notAsked.length > 0)) return 2;
  const busy = (p: ProviderPlan) =>
    p.create.length + p.change.length + (p.remove?.consumers.length ?? 0) + p.drifted.length > 0;
  return providers.some(busy) ? 1 : 0;
}

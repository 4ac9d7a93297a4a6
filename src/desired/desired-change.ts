/**
 * What a contributions file changes against what was last delivered, and whether the
 * mass-removal guard holds it back: the rules the desired-state sync applies (`desired-sync.ts`)
 * and `holdfast plan` foretells with (`src/plan/`), kept in one place so the two cannot drift.
 */
import type { ProviderConfig } from '../config/config.js';
import { sha256Hex } from '../secrets/sha256.js';
import type { ConsumerRecord } from '../store/consumer-record.js';
import { canonicalJson } from '../text/canonical-json.js';
import type { DeclaredBriefs } from './declared-briefs.js';
import type { DeliveredDigests } from './delivered-shelf.js';
import { digestText, specDigestBytes } from './spec-digest.js';

/**
 * The places of the declared consumers whose digest differs from the one last delivered, and the keys delivered that
 * are no longer declared.
 */
export function changesOf(
  declared: DeclaredBriefs,
  delivered: DeliveredDigests,
): { changed: number[]; gone: string[] } {
  const keys = new Set<string>();
  const changed: number[] = [];
  for (let index = 0; index < declared.length; index++) {
    const key = declared.key(index);
    keys.add(key);
    if (delivered.get(key) !== declared.digest(index)) changed.push(index);
  }
  return { changed, gone: [...delivered.keys()].filter((key) => !keys.has(key)) };
}

/**
 * Whether removing `removals` of the `of` consumers delivered at once is more than `provider`'s removal guard allows.
 */
export function removalsHeldBack(
  provider: Pick<ProviderConfig, 'removalGuard'>,
  removals: number,
  of: number,
): boolean {
  const { share, floor } = provider.removalGuard;
  return removals > floor && removals > share * of;
}

/** What identifies exactly one change (its digest): what a person's `holdfast confirm-removals` names. */
export function changeDigest(declared: DeclaredBriefs, changed: readonly number[], gone: readonly string[]): string {
  const pairs = [
    ...changed.map((index): [string, string | null] => [declared.key(index), declared.digest(index)]),
    ...gone.map((key): [string, null] => [key, null]),
  ];
  return sha256Hex(canonicalJson(pairs.sort()));
}

/** Hex digits of a change's digest that name it to a person (`status`, `plan`, `confirm-removals --change`). */
export const CHANGE_SHOWN = 12;

/** A change's digest as a person reads and types it. */
export function shortChange(change: string): string {
  return change.slice(0, CHANGE_SHOWN);
}

/**
 * The digest of the spec last delivered to a record's consumer, as the sync learns it at
 * start-up; undefined for a record being removed (no longer delivered).
 */
export function deliveredDigest(record: Pick<ConsumerRecord, 'desired' | 'refused'>): string | undefined {
  const bytes = deliveredDigestBytes(record);
  return bytes === undefined ? undefined : digestText(bytes);
}

/** {@link deliveredDigest}'s bytes (`spec-digest.ts`), as the sync keeps them. */
export function deliveredDigestBytes(record: Pick<ConsumerRecord, 'desired' | 'refused'>): Buffer | undefined {
  if (record.desired.removed) return undefined;
  // a refused spec was delivered last, while the record keeps the accepted one
  return specDigestBytes(record.refused ? { problems: record.refused.problems, specHash: '' } : record.desired);
}

/**
 * A rotation's overlap (`rotationOverlap`): for a while after an apply, the passwords the login
 * accepted before stay accepted beside the grant's; a check in that while accepts them too. Past
 * it, on evidence (connections from before the rotation, failed logins since), the old password is
 * kept until `rotationOverlapMax` at most (`workers/overlap-evidence.ts`).
 */
import type { z } from 'zod';
import { formatDuration } from './duration.js';

/** `rotationOverlapMax` when the file does not give it: an hour, or `rotationOverlap` if that is longer. */
export const DEFAULT_OVERLAP_MAX_MS = 3_600_000;

/** Whether `now` falls in the rotation overlap that follows an apply at `appliedAt` (ms since the epoch). */
export function inRotationOverlap(
  appliedAt: number | null,
  rotationOverlapMs: number | undefined,
  now: number,
): boolean {
  return rotationOverlapMs !== undefined && appliedAt !== null && now - appliedAt < rotationOverlapMs;
}

/**
 * How long after a rotation its connections from before it are looked for, and the longest its overlap is kept on
 * evidence: `rotationOverlapMax`, else an hour or `rotationOverlap` if longer.
 */
export function overlapMaxMs(provider: {
  rotationOverlapMs?: number | undefined;
  rotationOverlapMaxMs?: number | undefined;
}): number {
  return provider.rotationOverlapMaxMs ?? Math.max(DEFAULT_OVERLAP_MAX_MS, provider.rotationOverlapMs ?? 0);
}

/** The bound `rotationOverlapMax` keeps: at least `rotationOverlap` (each a duration in ms, as parsed). */
export function checkOverlapMax(
  provider: { rotationOverlap?: number | undefined; rotationOverlapMax?: number | undefined },
  ctx: z.RefinementCtx,
): void {
  const { rotationOverlap, rotationOverlapMax } = provider;
  if (rotationOverlap === undefined || rotationOverlapMax === undefined || rotationOverlapMax >= rotationOverlap)
    return;
  ctx.addIssue({
    code: 'custom',
    path: ['rotationOverlapMax'],
    message: `rotationOverlapMax (${formatDuration(rotationOverlapMax)}) must be at least rotationOverlap (${formatDuration(rotationOverlap)})`,
  });
}

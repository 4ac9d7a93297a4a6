/**
 * A rotation's overlap (`rotationOverlap`): for a while after an apply, the passwords the login
 * accepted before stay accepted beside the grant's; a check in that while accepts them too.
 */

/** Whether `now` falls in the rotation overlap that follows an apply at `appliedAt` (ms since the epoch). */
export function inRotationOverlap(
  appliedAt: number | null,
  rotationOverlapMs: number | undefined,
  now: number,
): boolean {
  return rotationOverlapMs !== undefined && appliedAt !== null && now - appliedAt < rotationOverlapMs;
}

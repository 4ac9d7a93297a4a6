/**
 * When a job put back (its consumer busy, its write conflicting, the store down) runs again: `ms` to twice that after
 * `now`, at random, so that jobs put back together do not come back together.
 */
export function putBackAt(now: number, ms: number): number {
  return now + ms + Math.floor(Math.random() * ms);
}

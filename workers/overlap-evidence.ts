/**
 * A rotation cut over on evidence (`redis-acl` with `rotationOverlap`): once `rotationOverlap` has
 * run, the old password is dropped when no connection from before the rotation remains (as the
 * old-connections watch last listed them: `src/old-connections/old-connections-watch.ts`) and no
 * failed login of the login was seen since, or at `rotationOverlapMax` after the rotation, whichever
 * comes first. Asked by a check only between the overlap's end and the deep check that ends it
 * (`effects.ts`); where nothing is known (no rotation noted, no listing lately, an adapter that
 * cannot list connections) the overlap ends as configured.
 */
import { formatDuration } from '../src/config/duration.js';
import { overlapMaxMs } from '../src/config/rotation-overlap.js';
import { clockOf, oldConnectionsWords } from '../src/old-connections/old-connections-words.js';
import type { FailedLoginsSince } from '../src/queue/failed-logins-since.js';
import type { RotationNotes } from '../src/queue/rotation-notes.js';
import type { ProviderRuntime } from './provider-runtime.js';

/** What a check does with a rotation's overlap once `rotationOverlap` has run. */
export type OverlapVerdict =
  /** Kept: the old password is still accepted (`why`: the evidence). */
  | { kind: 'held'; why: string }
  /** Dropped now, on evidence or at the bound (`why`: which, said in the transition's reason). */
  | { kind: 'cut'; why: string }
  /** Nothing known: the overlap ends as configured. */
  | { kind: 'none' };

export interface OverlapEvidence {
  /** The verdict for `key`'s overlap at `now` (`login`: its login). */
  verdict(provider: ProviderRuntime, key: string, login: string, now: number): Promise<OverlapVerdict>;
  /** `key`'s overlap was cut over at `now`: the status says when, and the cutover is not decided again. */
  cutOver(provider: ProviderRuntime, key: string, now: number): Promise<void>;
}

const NONE: OverlapVerdict = { kind: 'none' };

/**
 * Consumer `key`'s failed logins since `sinceMs`, as the failed-logins watch last noted them
 * (`src/queue/failed-logins-since.ts`); a provider whose backend's log is not read answers `known: false`.
 */
export type FailedLoginsOf = (key: string, sinceMs: number) => Promise<FailedLoginsSince>;

export function overlapEvidence(
  notes: Pick<RotationNotes, 'oldConnectionsOf' | 'noteCutover'>,
  failedLogins: FailedLoginsOf,
): OverlapEvidence {
  return {
    async verdict(provider, key, login, now) {
      const name = provider.config.name;
      const found = await notes.oldConnectionsOf(name, key).catch(() => undefined);
      if (found === undefined || found.cutAt !== undefined || found.login !== login) return NONE;
      const max = overlapMaxMs(provider.config);
      if (now >= found.at + max) {
        const left = found.count > 0 ? `${oldConnectionsWords(found)} still open` : 'nothing left open from before it';
        return {
          kind: 'cut',
          why: `rotation overlap ended at rotationOverlapMax (${formatDuration(max)} after the rotation at ${clockOf(found.at)}): ${left}`,
        };
      }
      if (found.count > 0) return { kind: 'held', why: oldConnectionsWords(found) };
      // a read that fails is no evidence of a failure: it holds nothing open
      const failed = await failedLogins(key, found.at).catch(() => undefined);
      if (failed && failed.count > 0)
        return { kind: 'held', why: `${failed.count} failed login(s) since the rotation at ${clockOf(found.at)}` };
      return {
        kind: 'cut',
        why: `rotation overlap ended on evidence: no connection from before the rotation at ${clockOf(found.at)} remains${failed?.known ? ' and no failed login since' : ''}`,
      };
    },
    async cutOver(provider, key, now) {
      await notes.noteCutover(provider.config.name, key, now).catch(() => undefined);
    },
  };
}

/**
 * Where one node's `ACL LOG` was last read, so that each read reports only the failed logins new
 * since the last one, never one twice, and says when entries may have been lost between reads.
 *
 * Redis groups failures of one login, reason, context and command into one entry (its `count`
 * grows) while the entry is among the newest ten and last updated within 60 s; the log keeps
 * `acllog-max-len` entries (128), dropping the oldest.
 *
 * - Redis 7.2+ (`entry-id`): an entry is known by its id; what is new is its count beyond the
 *   count last read (all of it for an id never read). Entries were lost when a full log's oldest
 *   id is past the next id after the last read.
 * - Redis 7.0 (no id, no creation time): an entry not updated since the last read keeps its count
 *   and its last update (the read's time less its age): known by both. Only the newest entry of a
 *   login, context and command can grow (Redis moves an updated entry to the head): one found
 *   with a larger count, updated later, is that entry grown, and only its growth is new. Any other
 *   entry is new. Where this cannot tell (a grown entry that also dropped its predecessor off the
 *   log's tail) it counts less, never twice.
 */
import type { AclLogEntry } from './acl-log.js';

/** How far two reads' views of an entry's last update may differ (the age is read in ms, the clocks are one). */
const SAME_UPDATE_MS = 1_500;

/** Failed logins new since the last read, per entry. */
export interface NewFailures {
  entry: AclLogEntry;
  /** How many of the entry's count are new. */
  count: number;
}

export interface CursorRead {
  fresh: NewFailures[];
  /** The log may have dropped entries never read (it is full and holds none read before). */
  lost: boolean;
}

const groupOf = (e: AclLogEntry): string => `${e.username}\u0000${e.context}\u0000${e.object}`;

export class AclLogCursor {
  /** The last read's entries (none before the first read). */
  private last: AclLogEntry[] | undefined;

  /** `entries`: one read of the log, newest first; `full`: it holds as many entries as the log keeps. */
  read(entries: readonly AclLogEntry[], full: boolean): CursorRead {
    const last = this.last;
    this.last = [...entries];
    // the first read learns where the log stands: what it holds happened before holdfast looked
    if (last === undefined) return { fresh: [], lost: false };
    const withIds = entries.length > 0 && entries.every((e) => e.entryId !== undefined);
    return withIds ? byId(entries, last, full) : byUpdate(entries, last, full);
  }
}

/** Redis 7.2+: entries known by id. */
function byId(entries: readonly AclLogEntry[], last: readonly AclLogEntry[], full: boolean): CursorRead {
  const counts = new Map(last.map((e) => [e.entryId, e.count]));
  const lastMax = Math.max(-1, ...last.map((e) => e.entryId ?? -1));
  const ids = entries.map((e) => e.entryId!);
  // a server restarted numbers its entries from 0 again: none read before is there, and every id is below the last
  const restarted = ids.every((id) => !counts.has(id)) && Math.max(...ids) < lastMax;
  const fresh = entries.flatMap((entry) => {
    const before = counts.get(entry.entryId);
    if (before === undefined && !restarted && entry.entryId! <= lastMax) return [];
    const count = entry.count - (before ?? 0);
    return count > 0 ? [{ entry, count }] : [];
  });
  const lost = full && !restarted && last.length > 0 && Math.min(...ids) > lastMax + 1;
  return { fresh, lost };
}

/** Redis 7.0: entries known by their group, count and last update; only a group's newest can have grown. */
function byUpdate(entries: readonly AclLogEntry[], last: readonly AclLogEntry[], full: boolean): CursorRead {
  const unmatched = new Set(last);
  const same = (a: AclLogEntry, b: AclLogEntry): boolean =>
    groupOf(a) === groupOf(b) && a.count === b.count && Math.abs(a.lastUpdated - b.lastUpdated) <= SAME_UPDATE_MS;
  const unchanged = new Set<AclLogEntry>();
  for (const entry of entries) {
    const was = [...unmatched].find((e) => same(e, entry));
    if (was === undefined) continue;
    unmatched.delete(was);
    unchanged.add(entry);
  }
  const newestBefore = new Map<string, AclLogEntry>();
  for (const e of last) if (!newestBefore.has(groupOf(e))) newestBefore.set(groupOf(e), e);
  const grownSeen = new Set<string>();
  let known = unchanged.size;
  const fresh: NewFailures[] = [];
  for (const entry of entries) {
    if (unchanged.has(entry)) continue;
    const group = groupOf(entry);
    const was = newestBefore.get(group);
    const grown =
      !grownSeen.has(group) &&
      was !== undefined &&
      unmatched.has(was) &&
      entry.count > was.count &&
      entry.lastUpdated >= was.lastUpdated - SAME_UPDATE_MS;
    grownSeen.add(group);
    if (grown) known += 1;
    const count = grown ? entry.count - was.count : entry.count;
    if (count > 0) fresh.push({ entry, count });
  }
  return { fresh, lost: full && last.length > 0 && known === 0 };
}

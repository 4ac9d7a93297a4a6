/**
 * Several workers note the same provider's nodes, and each counts only the consumers it checked
 * itself: what one worker found a node lacking must not be wiped by another that checked none of
 * those consumers (the status would flicker between red and green). So a worker's note keeps,
 * per node, another worker's larger count while that count is fresh (noted within the note's
 * time to live): the status shows the largest count any worker found lately, and a count its
 * worker no longer notes (healed, or the worker stopped) goes within that time.
 */
import { NODE_MISSING_MAX, NODE_WHY_CHARS, NODES_NOTED, type NodesNote, type NoteNode } from './values.js';

function cut(text: string | undefined): string | undefined {
  return text === undefined || text.length <= NODE_WHY_CHARS ? text : `${text.slice(0, NODE_WHY_CHARS - 1)}…`;
}

/**
 * `note` within the bounds the status decodes it with: long reasons cut, the count bounded, at most {@link NODES_NOTED}
 * nodes.
 */
export function boundedNote(note: NodesNote): NodesNote {
  const nodes = note.nodes.slice(0, NODES_NOTED).map((n) => ({
    ...n,
    ...(n.why !== undefined ? { why: cut(n.why) } : {}),
    ...(n.missingWhy !== undefined ? { missingWhy: cut(n.missingWhy) } : {}),
    ...(n.missing !== undefined ? { missing: Math.min(n.missing, NODE_MISSING_MAX) } : {}),
  }));
  return { at: note.at, nodes, ...(note.by !== undefined ? { by: note.by } : {}) };
}

/** `note` (by one worker), each node keeping `previous`'s larger count of another worker while it is fresh. */
export function mergeMissing(previous: NodesNote | null, note: NodesNote, ttlMs: number): NodesNote {
  const now = Date.parse(note.at);
  const before = new Map((previous?.nodes ?? []).map((n) => [n.address, n]));
  const nodes = note.nodes.map((n): NoteNode => {
    const own = n.missing ?? 0;
    const other = before.get(n.address);
    const otherFresh =
      other?.missingBy !== undefined &&
      other.missingBy !== note.by &&
      other.missingAt !== undefined &&
      now - Date.parse(other.missingAt) < ttlMs;
    if (otherFresh && (other.missing ?? 0) > own)
      return {
        ...n,
        missing: other.missing,
        missingWhy: other.missingWhy,
        missingBy: other.missingBy,
        missingAt: other.missingAt,
      };
    return own > 0 && note.by !== undefined ? { ...n, missingBy: note.by, missingAt: note.at } : n;
  });
  return { ...note, nodes };
}

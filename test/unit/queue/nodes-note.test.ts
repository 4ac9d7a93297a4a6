/**
 * A worker's note of its backend nodes is written within the bounds the status decodes it with:
 * a long reason (a node's error, why it lacks consumers) is cut, not left to make the whole note
 * undecodable (the status would then show no node at all, and be green over a node it cannot ask).
 * Several workers each count the consumers they checked: a larger count another worker noted
 * lately stands, until it is no longer noted.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { coordinationKeys, holdfastPrefix } from '../../../src/queue/coordination/keys.js';
import { Notes } from '../../../src/queue/coordination/notes.js';
import { ScriptRunner } from '../../../src/queue/coordination/scripts.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { mergeMissing } from '../../../src/queue/coordination/nodes-note-merge.js';
import { decodeJson, nodesNoteCodec, type NodesNote } from '../../../src/queue/coordination/values.js';

describe("a worker's note of its backend nodes", () => {
  it('cuts long reasons and bounds the count, so that the status decodes it', async () => {
    const written: unknown[][] = [];
    const redis = {
      defineCommand: () => undefined,
      get: () => Promise.resolve(null),
      set: (...args: unknown[]) => (written.push(args), Promise.resolve('OK')),
    } as unknown as Redis;
    const keys = coordinationKeys(holdfastPrefix('{hf}'));
    const notes = new Notes({ redis, keys, scripts: new ScriptRunner(redis, keys) }, new NoteSeal(Buffer.alloc(32)));
    const long = `connect ETIMEDOUT ${'x'.repeat(2_000)}`;
    await notes.setNodes(
      'cache',
      {
        at: '2026-12-02T07:00:00.000Z',
        nodes: [
          { address: '10.0.0.6:6379', role: 'replica', answering: false, why: long, missing: 1e12, missingWhy: long },
        ],
      },
      10_000,
    );
    const note = decodeJson(nodesNoteCodec, String(written[0]![1]));
    expect(note).not.toBeNull();
    expect(note!.nodes[0]!.why!.startsWith('connect ETIMEDOUT x')).toBe(true);
    expect(note!.nodes[0]!.why!.length).toBeLessThanOrEqual(500);
    expect(note!.nodes[0]!.missingWhy!.length).toBeLessThanOrEqual(500);
    expect(note!.nodes[0]!.missing).toBe(10_000_000);
  });

  it("keeps another worker's larger count while it is fresh, and lets it go once it is not noted again", () => {
    const replica = (missing: number, more: Partial<NodesNote['nodes'][number]> = {}) => ({
      address: '10.0.0.6:6379',
      role: 'replica' as const,
      answering: true,
      missing,
      ...more,
    });
    const byA: NodesNote = mergeMissing(
      null,
      {
        at: '2026-12-02T07:00:00.000Z',
        by: 'a',
        nodes: [replica(3, { missingWhy: 'applying there failed (NOPERM)' })],
      },
      10_000,
    );
    expect(byA.nodes[0]).toMatchObject({ missing: 3, missingBy: 'a', missingAt: '2026-12-02T07:00:00.000Z' });
    // worker b checked none of those consumers: a's count stands
    const byB = mergeMissing(byA, { at: '2026-12-02T07:00:02.000Z', by: 'b', nodes: [replica(0)] }, 10_000);
    expect(byB.nodes[0]).toMatchObject({ missing: 3, missingWhy: 'applying there failed (NOPERM)', missingBy: 'a' });
    // a itself finds them applied: its own 0 stands
    expect(
      mergeMissing(byB, { at: '2026-12-02T07:00:04.000Z', by: 'a', nodes: [replica(0)] }, 10_000).nodes[0]!.missing,
    ).toBe(0);
    // a no longer notes (stopped): its count goes after the note's time to live
    expect(
      mergeMissing(byB, { at: '2026-12-02T07:00:11.000Z', by: 'b', nodes: [replica(0)] }, 10_000).nodes[0]!.missing,
    ).toBe(0);
  });
});

/**
 * The group commit's lanes, on a collection that answers at once (the batching alone; the store
 * itself is tested on FerretDB in `test/integration/store/group-commit.test.ts`): a write that
 * arrives while a lane is ending is still sent, however many turns of the microtask queue after
 * the write before it its writer comes back.
 */
import type { Collection } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../../src/store/group-commit.js';

type Doc = { _id: string };

/** A collection whose every bulk of updates and every insert succeeds at once. */
function answering(): Collection<Doc> {
  return {
    bulkWrite: (ops: unknown[]) => Promise.resolve({ matchedCount: ops.length }),
    insertMany: () => Promise.resolve({}),
  } as unknown as Collection<Doc>;
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};
const within = <T>(work: Promise<T>, ms: number) =>
  Promise.race([work, new Promise((r) => setTimeout(() => r('never sent'), ms))]);

describe('the group commit', () => {
  it('sends a write that arrives while every lane is ending (its writer back some microtask turns after its last write)', async () => {
    for (let n = 0; n < 12; n++) {
      const group = new GroupCommit(answering());
      const writer = async () => {
        await group.update('a', { $set: { rev: 1 } });
        await turns(n);
        return group.update('a', { $set: { rev: 2 } });
      };
      const inserter = async () => {
        await group.insert({ _id: 'b' });
        await turns(n);
        return group.insert({ _id: 'c' });
      };
      expect(await within(writer(), 1000), `an update ${n} turns later`).toBe(true);
      expect(await within(inserter(), 1000), `an insert ${n} turns later`).toBe(true);
    }
  });
});

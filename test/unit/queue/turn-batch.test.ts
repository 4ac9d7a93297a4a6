/** Calls of one turn of the event loop go out as one, each call returning its own reply or the call's error. */
import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../../../src/queue/coordination/turn-batch.js';

describe('a turn batch', () => {
  it('sends the calls of one turn together, and each caller gets its own answer', async () => {
    const sent: number[][] = [];
    const batch = new TurnBatch<number, number>((inputs) =>
      Promise.resolve(void sent.push(inputs)).then(() => inputs.map((n) => n * 10)),
    );
    const first = await Promise.all([1, 2, 3].map((n) => batch.call(n)));
    const second = await batch.call(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(sent).toEqual([[1, 2, 3], [4]]);
  });

  it('fails every call of a batch whose send failed, and the next turn is sent anew', async () => {
    let fail = true;
    const batch = new TurnBatch<number, number>((inputs) =>
      fail ? Promise.reject(new Error('no answer')) : Promise.resolve(inputs),
    );
    const failed = await Promise.allSettled([batch.call(1), batch.call(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batch.call(3)).resolves.toBe(3);
  });

  it('sends at most 256 at once', async () => {
    const sizes: number[] = [];
    const batch = new TurnBatch<number, number>((inputs) =>
      Promise.resolve(void sizes.push(inputs.length)).then(() => inputs),
    );
    await Promise.all(Array.from({ length: 600 }, (_, i) => batch.call(i)));
    expect(sizes).toEqual([256, 256, 88]);
  });
});

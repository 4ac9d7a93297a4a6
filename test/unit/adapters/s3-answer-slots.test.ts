import { describe, expect, it } from 'vitest';
import { AnswerSlots } from '../../../src/adapters/s3-identities/answer-slots.js';

/** A request the test answers by hand. */
function pending() {
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  return { answered, answer };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('AnswerSlots', () => {
  it('keeps a slot until the request is answered, even after its caller gave up', async () => {
    const slots = new AnswerSlots(1);
    const first = pending();
    const gaveUp = new AbortController();
    const started: string[] = [];
    void slots.send(gaveUp.signal, () => (started.push('first'), first.answered));
    gaveUp.abort();
    const second = slots.send(new AbortController().signal, () => (started.push('second'), Promise.resolve()));
    await tick();
    expect(started).toEqual(['first']);
    first.answer();
    await second;
    expect(started).toEqual(['first', 'second']);
  });

  it('leaves the line, nothing sent, when its signal aborts while it waits', async () => {
    const slots = new AnswerSlots(1);
    const first = pending();
    void slots.send(new AbortController().signal, () => first.answered);
    const waiting = new AbortController();
    let sent = false;
    const late = slots.send(waiting.signal, () => ((sent = true), Promise.resolve()));
    waiting.abort();
    await expect(late).rejects.toThrow(/waiting for an answer slot/);
    first.answer();
    await tick();
    expect(sent).toBe(false);
  });

  it('gives a freed slot to the newest waiting when newestFirst, to the oldest otherwise', async () => {
    for (const [newestFirst, order] of [
      [true, ['c', 'b', 'a']],
      [false, ['a', 'b', 'c']],
    ] as const) {
      const slots = new AnswerSlots(1, newestFirst);
      const first = pending();
      const started: string[] = [];
      void slots.send(new AbortController().signal, () => first.answered);
      const rest = ['a', 'b', 'c'].map((name) =>
        slots.send(new AbortController().signal, () => (started.push(name), Promise.resolve())),
      );
      await tick();
      first.answer();
      await Promise.all(rest);
      expect(started).toEqual(order);
    }
  });
});

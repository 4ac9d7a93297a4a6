/**
 * The shelf of specs a sync pass keeps between reading a file and delivering what changed
 * (`src/desired/spec-shelf.ts`): every spec put is given back as it was, over many deflated chunks
 * and in any order, and an item none was kept for is refused.
 */
import { describe, expect, it } from 'vitest';
import type { DeclaredConsumer } from '../../../src/desired/consumer-spec.js';
import { SpecShelf } from '../../../src/desired/spec-shelf.js';

const consumer = (i: number): DeclaredConsumer => ({
  key: `cache/c${i}`,
  id: `c${i}`,
  desired: {
    login: `app_é_${i}`,
    values: { keys: [`c${i}:*`, 'x'.repeat(i % 500)] },
    secretPath: `/grants/c${i}.secret`,
    specHash: String(i).padStart(64, '0'),
    source: `/contributions/cache.yaml:${i * 4 + 2}`,
    removed: false,
    problems: i % 7 === 0 ? [`consumers[${i}].values: refused`] : [],
  },
});

describe('the spec shelf', () => {
  it('gives back every spec kept, across chunks, in any order; none for an item not kept', () => {
    const shelf = new SpecShelf();
    // every third item kept, about 4 MB of JSON: several chunks, and one spec larger than a chunk
    const kept = Array.from({ length: 9000 }, (_, i) => i * 3);
    const large = { ...consumer(1), desired: { ...consumer(1).desired, values: { keys: ['y'.repeat(1_500_000)] } } };
    for (const i of kept) shelf.put(i, i === 3000 ? large : consumer(i));
    expect(shelf.get(0)).toEqual(consumer(0));
    expect(shelf.get(3000)).toEqual(large);
    for (const i of [...kept].reverse().filter((_, n) => n % 13 === 0))
      expect(shelf.get(i)).toEqual(i === 3000 ? large : consumer(i));
    for (const i of kept) expect(shelf.get(i).key).toBe(`cache/c${i === 3000 ? 1 : i}`);
    expect(() => shelf.get(1)).toThrow(RangeError);
    expect(() => shelf.get(27_000)).toThrow('no spec kept for item 27000');
  });
});

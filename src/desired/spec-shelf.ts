/**
 * The full specs of a contributions file's changed consumers, parsed once and kept until the sync
 * delivers them: each as its JSON (what a job carries of it anyway) in chunks of a megabyte, each
 * deflated once full, outside V8's heap; not as an object graph per consumer, and not as the file's
 * text to be parsed again. Specs repeat their paths and rules, so 100,000 new consumers' (38 MB of
 * JSON) keep a few megabytes here for the length of one pass. They are asked for in the file's
 * order, a delivery chunk at a time, so one chunk inflated is kept at once.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { DeclaredConsumer } from './consumer-spec.js';

/** Bytes of one chunk (a spec larger than that gets a chunk of its own). */
const CHUNK_BYTES = 1 << 20;

/** No spec kept for an item. */
const NONE = -1;

/** Fast: the chunks compress well at the lowest level (about 10 to 1 here), and are deflated once each. */
const DEFLATE = { level: 1 };

export class SpecShelf {
  /** Deflated, all but the last: the one being filled. */
  private readonly chunks: Buffer[] = [];
  /** The last chunk inflated, by its number. */
  private inflated: { chunk: number; bytes: Buffer } | undefined;
  /** Bytes used of the last chunk. */
  private used = 0;
  /** Per item index: its spec's slot, or {@link NONE}. */
  private slotOf = new Int32Array(1024).fill(NONE);
  /** Per slot: its chunk, and its start and end in it. */
  private places = new Uint32Array(3 * 1024);
  private slots = 0;

  /** Keeps the spec of item `index`. */
  put(index: number, consumer: DeclaredConsumer): void {
    const text = JSON.stringify(consumer);
    const bytes = Buffer.byteLength(text);
    let chunk = this.chunks.at(-1);
    if (chunk === undefined || this.used + bytes > chunk.length) {
      if (chunk !== undefined)
        this.chunks[this.chunks.length - 1] = deflateRawSync(chunk.subarray(0, this.used), DEFLATE);
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
      this.chunks.push(chunk);
      this.used = 0;
    }
    chunk.write(text, this.used, 'utf8');
    this.place(index, this.chunks.length - 1, this.used, this.used + bytes);
    this.used += bytes;
  }

  /** The spec of item `index`, as it was put; a RangeError when none was kept for it (a caller's mistake). */
  get(index: number): DeclaredConsumer {
    const slot = index < this.slotOf.length ? this.slotOf[index]! : NONE;
    if (slot === NONE) throw new RangeError(`no spec kept for item ${index}`);
    const [chunk, start, end] = this.places.subarray(slot * 3, slot * 3 + 3);
    return JSON.parse(this.bytesOf(chunk!).toString('utf8', start, end)) as DeclaredConsumer;
  }

  /** Chunk `chunk`'s bytes: the last one as it fills, an earlier one inflated (kept until another is asked for). */
  private bytesOf(chunk: number): Buffer {
    if (chunk === this.chunks.length - 1) return this.chunks[chunk]!;
    if (this.inflated?.chunk !== chunk) this.inflated = { chunk, bytes: inflateRawSync(this.chunks[chunk]!) };
    return this.inflated.bytes;
  }

  private place(index: number, chunk: number, start: number, end: number): void {
    while (index >= this.slotOf.length) {
      const larger = new Int32Array(this.slotOf.length * 2).fill(NONE);
      larger.set(this.slotOf);
      this.slotOf = larger;
    }
    if (this.slots * 3 + 3 > this.places.length) {
      const larger = new Uint32Array(this.places.length * 2);
      larger.set(this.places);
      this.places = larger;
    }
    this.slotOf[index] = this.slots;
    this.places.set([chunk, start, end], this.slots * 3);
    this.slots++;
  }
}

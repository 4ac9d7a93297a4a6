/**
 * Where each item of a contributions file's `consumers:` list lies in its text, for a file of
 * the plain shape the mesh writes: a `consumers:` line alone at the top level, then a block
 * sequence whose items all begin at one indentation (`  - id: …` or `- id: …`). Each item can
 * then be parsed on its own (see `load-contributions.ts`), so that no tree of the whole document
 * is ever held. Any other shape (a flow list, another top-level key, a directive or document
 * marker, carriage returns, a tab before an item) is undefined: the file is read as one document.
 *
 * Splitting only ever cuts before a line that, in the whole document, begins a new item of the
 * list; an item whose own text would end there (an unclosed quote, an unclosed flow collection)
 * fails to parse alone, and the caller falls back to the whole document, which then says what
 * is wrong exactly as before.
 */

/** One item's text: `text.slice(start, end)`, whose first line is line `line` (1-based) of the file. */
export interface ItemSpan {
  start: number;
  end: number;
  line: number;
}

/**
 * The items' spans, kept as two numbers each (its start and its line; it ends where the next
 * begins) in typed arrays: the sync holds them for a whole pass, one per consumer.
 */
export class ItemSpans {
  private starts: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private lines: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private count = 0;

  constructor(private readonly textLength: number) {}

  get length(): number {
    return this.count;
  }

  /** The span of item `index` (0 ≤ index < length). */
  at(index: number): ItemSpan {
    const end = index + 1 < this.count ? this.starts[index + 1]! : this.textLength;
    return { start: this.starts[index]!, end, line: this.lines[index]! };
  }

  toArray(): ItemSpan[] {
    return Array.from({ length: this.count }, (_, index) => this.at(index));
  }

  /** An item beginning at `start`, on line `line`: the one before it ends there. */
  add(start: number, line: number): void {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts);
      this.lines = grown(this.lines);
    }
    this.starts[this.count] = start;
    this.lines[this.count] = line;
    this.count++;
  }
}

const grown = (array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> => {
  const larger = new Uint32Array(array.length * 2);
  larger.set(array);
  return larger;
};

const HEADER = /^consumers:[ ]*(?:#.*)?$/;
const ITEM = /^( *)-(?: |$)/;

/** A line that only a YAML comment or blanks fill. */
const blankOrComment = (line: string) => /^[ ]*(?:#.*)?$/.test(line);

/** The spans of the items, or undefined when the text is not of the plain shape. */
export function itemSpans(text: string): ItemSpans | undefined {
  if (text.includes('\r') || text.includes('\t') || text.charCodeAt(0) === 0xfeff) return undefined;
  const spans = new ItemSpans(text.length);
  let indent: number | undefined;
  let header = false;
  let offset = 0;
  let line = 0;
  while (offset < text.length) {
    const next = text.indexOf('\n', offset);
    const end = next === -1 ? text.length : next + 1;
    const content = text.slice(offset, next === -1 ? text.length : next);
    line++;
    if (!header) {
      if (HEADER.test(content)) header = true;
      else if (!blankOrComment(content)) return undefined;
    } else if (!blankOrComment(content)) {
      const item = ITEM.exec(content);
      const width = /^ */.exec(content)![0].length;
      if (indent === undefined) {
        if (!item) return undefined;
        indent = item[1]!.length;
      }
      if (item && item[1]!.length === indent) {
        spans.add(offset, line);
      } else if (width <= indent) {
        // something at the list's own level (or above it) that is not an item: not the plain shape
        return undefined;
      }
    }
    offset = end;
  }
  return spans.length > 0 ? spans : undefined;
}

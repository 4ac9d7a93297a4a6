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

const HEADER = /^consumers:[ ]*(?:#.*)?$/;
const ITEM = /^( *)-(?: |$)/;

/** A line that only a YAML comment or blanks fill. */
const blankOrComment = (line: string) => /^[ ]*(?:#.*)?$/.test(line);

/** The spans of the items, or undefined when the text is not of the plain shape. */
export function itemSpans(text: string): ItemSpan[] | undefined {
  if (text.includes('\r') || text.includes('\t') || text.charCodeAt(0) === 0xfeff) return undefined;
  const spans: ItemSpan[] = [];
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
        if (spans.length > 0) spans[spans.length - 1]!.end = offset;
        spans.push({ start: offset, end: text.length, line });
      } else if (width <= indent) {
        // something at the list's own level (or above it) that is not an item: not the plain shape
        return undefined;
      }
    }
    offset = end;
  }
  return spans.length > 0 ? spans : undefined;
}

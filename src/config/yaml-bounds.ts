/**
 * Bounds on what the YAML parser is given to build, judged before it builds anything. The
 * `yaml` library's parser holds a tree of every node of a document (about a kilobyte and a few
 * microseconds each) and recurses into its nesting: 4.5 million nested brackets, 9 MB of text,
 * took gigabytes and minutes. Its lexer alone holds nothing but a few counters, so the text is
 * first walked token by token ({@link scanYaml}), and a document deeper or larger than its
 * bounds is refused as soon as the walk passes them, naming the bound and the line: before a
 * node of it is built, in time proportional to the text read so far.
 *
 * Both are counted so as never to fall short of what the parser builds (a generated test holds
 * them to it): nodes are counted from tokens, for each the most nodes it may make the parser
 * build (a `:` its value, the map it may begin, and its key when empty), about twice the
 * parser's nodes in a plain file. Depth is the flow collections open, plus two
 * for each deeper indentation of the block levels (a map and a list beside it may share one),
 * plus one for each `-`, `?` or `:` before it on its line.
 */
import { CST, Lexer } from 'yaml';

export interface YamlBounds {
  /** Deepest nesting accepted. */
  maxDepth: number;
  /** Most nodes (as counted here) in the document. */
  maxNodes: number;
  /** What the bound is, in a refusal: `holdfast's bound on one contributions entry`. */
  what: string;
}

/** How deep a document holdfast reads may nest, as counted here: a contributions entry needs about 10, a configuration 12. */
export const MAX_DEPTH = 64;

/**
 * Most nodes of a document parsed at once (a configuration, a contributions file that is not of
 * the plain shape, or one entry of a file of the plain shape): about 200 MB and a second or two
 * of the parser's at most. A list of 100,000 items in one entry is still read, to be refused alone.
 */
export const MAX_DOCUMENT_NODES = 200_000;

export const DOCUMENT_BOUNDS: YamlBounds = {
  maxDepth: MAX_DEPTH,
  maxNodes: MAX_DOCUMENT_NODES,
  what: 'the bound on a YAML document',
};

/** What the walk found: the document's nodes, or the bound it passed and where. */
export type YamlScan =
  { ok: true; nodes: number } | { ok: false; bound: 'depth' | 'nodes'; offset: number; reason: string };

/** Tokens the lexer adds that are not text of the document (its mode and scalar markers). */
const MARKERS = new Set(['doc-mode', 'scalar', 'flow-error-end']);

/** Tokens that end a node's content: a `:` after one has a key, a `,` after one ends an entry. */
const CONTENT = new Set(['scalar-text', 'single-quoted-scalar', 'double-quoted-scalar', 'alias', 'flow-end']);

const count = (n: number) => n.toLocaleString('en-US');

/** The walk's state: the block indentations open, the flow collections open, the nodes counted so far. */
class Walk {
  private readonly indents: number[] = [];
  private flow = 0;
  private compact = 0;
  nodes = 0;
  offset = 0;
  private lineStart = true;
  private indent = 0;
  private scalarText = false;
  /** The last token that was not a space, a newline, a comment or a marker. */
  private previous = '';

  get depth(): number {
    return this.flow + 2 * this.indents.length + this.compact;
  }

  step(token: string): void {
    if (this.scalarText) {
      // a scalar's own text (a block scalar's lines among them): nothing in it nests
      this.scalarText = false;
      this.offset += token.length;
      this.lineStart = token.endsWith('\n');
      this.indent = 0;
      this.previous = 'scalar-text';
      return;
    }
    const type = CST.tokenType(token) ?? '';
    if (this.lineStart) this.atLineStart(token, type);
    this.nodes += this.nodesOf(type);
    this.scalarText = type === 'scalar';
    if (!MARKERS.has(type)) this.offset += token.length;
    if (type === 'newline' || token.endsWith('\n')) {
      this.lineStart = true;
      this.indent = 0;
    }
  }

  /** The indentation of a line, and its block level once its first token shows. */
  private atLineStart(token: string, type: string): void {
    if (type === 'space' && !token.includes('\n')) this.indent = token.length;
    else if (type !== 'newline' && type !== 'comment' && type !== 'doc-mode') {
      this.lineStart = false;
      this.compact = 0;
      const { indents } = this;
      if (this.flow > 0) return;
      while (indents.length > 0 && indents[indents.length - 1]! > this.indent) indents.pop();
      if (indents.length === 0 || indents[indents.length - 1]! < this.indent) indents.push(this.indent);
    }
  }

  /** The nodes a token may make the parser build (nesting counted on the way). */
  private nodesOf(type: string): number {
    const after = this.previous;
    if (type !== 'space' && type !== 'newline' && type !== 'comment' && !MARKERS.has(type)) this.previous = type;
    switch (type) {
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
      case 'alias':
      case 'anchor':
      case 'tag':
      case 'doc-start':
        return 1;
      case 'flow-map-start':
      case 'flow-seq-start':
        this.flow++;
        return 2;
      case 'flow-map-end':
      case 'flow-seq-end':
        this.previous = 'flow-end';
        // one closing nothing is a node of its own (an error the parser keeps)
        if (this.flow === 0) return 1;
        this.flow--;
        return 0;
      case 'comma':
        // an empty entry
        return CONTENT.has(after) ? 0 : 1;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        if (this.flow === 0) this.compact++;
        return 2;
      case 'map-value-ind':
        // a value on the key's line is a level (or, after another on the line, a map the parser nests)
        if (this.flow === 0) this.compact++;
        // the pair's value, the map it may begin, and its key when empty
        return CONTENT.has(after) ? 2 : 3;
      default:
        return 0;
    }
  }
}

/** Walks `text` token by token; stops at the first bound passed. */
export function scanYaml(text: string, bounds: YamlBounds): YamlScan {
  const walk = new Walk();
  for (const token of new Lexer().lex(text)) {
    const offset = walk.offset;
    walk.step(token);
    if (walk.depth > bounds.maxDepth)
      return {
        ok: false,
        bound: 'depth',
        offset,
        reason: `nested more than ${bounds.maxDepth} levels deep (${bounds.what}); refused before it is parsed`,
      };
    if (walk.nodes > bounds.maxNodes)
      return {
        ok: false,
        bound: 'nodes',
        offset,
        reason: `more than ${count(bounds.maxNodes)} YAML nodes (${bounds.what}); refused before it is parsed`,
      };
  }
  return { ok: true, nodes: walk.nodes };
}

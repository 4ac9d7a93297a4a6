/**
 * YAML files whose problems are told as `<file>:<line>: <field>: <reason>`: the parsed value
 * keeps its document, so a zod issue's path leads back to the line that holds the field (or,
 * when the field is missing, to its nearest existing parent).
 */
import { readFile } from 'node:fs/promises';
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, visit, type Document } from 'yaml';
import type { z } from 'zod';
import { HoldfastError } from '../errors/holdfast-error.js';
import { readBounded, type SizeLimit } from './bounded-read.js';
import { listedProblems } from './problem-list.js';
import { DOCUMENT_BOUNDS, scanYaml, type YamlBounds } from './yaml-bounds.js';

export type FieldPath = readonly PropertyKey[];

/**
 * The outcome of reading a YAML file: a source, or the problems that keep it from being one;
 * `beyond` when the text passed a bound on depth or nodes and was not parsed (see `yaml-bounds.ts`).
 */
export type YamlRead = { ok: true; source: YamlSource } | { ok: false; problems: string[]; beyond?: 'depth' | 'nodes' };

/**
 * A validation outcome; its problems were added to the caller's list, but for those `apart`
 * took (`onlyApart`: every issue was one of those).
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; onlyApart?: boolean };

/** Picks the issues a caller tells in its own way (an entry refused alone), left out of `problems`. */
export type ApartIssue = (issue: z.core.$ZodIssue) => boolean;

/**
 * The error for a file that cannot be used: `invalid <what> <file> (<n> problems):` and one line
 * per problem, at most 100 of them, then `… and <n> more`.
 */
export function invalidFile(
  code: 'CONFIG_INVALID' | 'CONTRIBUTIONS_INVALID' | 'CONTRIBUTIONS_BEYOND_BOUNDS',
  what: string,
  file: string,
  problems: readonly string[],
): HoldfastError {
  const count = problems.length === 1 ? '1 problem' : `${problems.length.toLocaleString('en-US')} problems`;
  const listed = listedProblems(problems);
  return new HoldfastError(code, `invalid ${what} ${file} (${count}):\n  ${listed.join('\n  ')}`, { problems: listed });
}

/** A field name said as it is: a key of a YAML file may be anything its writer typed. */
const PLAIN_KEY = /^[A-Za-z0-9_$-]{1,128}$/;

/** Any other name JSON-quoted (controls escaped), and said by its start when as long as a file. */
function quotedKey(key: string): string {
  return key.length > 128 ? `${JSON.stringify(key.slice(0, 128))}…` : JSON.stringify(key);
}

/** `consumers[1].login`, `consumers[0]["\u001b[2J"]`; the empty path is `(top level)`. */
export function formatPath(path: FieldPath): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (PLAIN_KEY.test(String(key))) text += text === '' ? String(key) : `.${String(key)}`;
    else text += `[${quotedKey(String(key))}]`;
  }
  return text === '' ? '(top level)' : text;
}

/** 1-based line of `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line++;
  return line;
}

/**
 * The keys that repeat an earlier key of their map (scalars of the same value), as the library
 * says them (`Map keys must be unique`), found with one set per map rather than its pairwise test.
 */
function repeatedKeys(doc: Document): Array<{ offset: number; message: string }> {
  const repeated: Array<{ offset: number; message: string }> = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) repeated.push({ offset: key.range?.[0] ?? 0, message: 'Map keys must be unique' });
        seen.add(key.value);
      }
    },
  });
  return repeated;
}

/** A missing field reads `required` rather than zod's "expected string, received undefined". */
const required = (issue: z.core.$ZodRawIssue) =>
  issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined;

export class YamlSource {
  private constructor(
    /** The file's path, as it appears in messages. */
    readonly file: string,
    /** The document as plain JavaScript values; `null` when the file holds no document. */
    readonly value: unknown,
    private readonly doc: Document,
    private readonly lines: LineCounter,
    /** The document's YAML nodes, as `scanYaml` counts them (what parsing it cost). */
    readonly nodes: number,
    /** For one item of a list parsed alone: its place in the file's list, and the file's line its text begins on. */
    private readonly item?: { index: number; firstLine: number },
  ) {}

  /**
   * Parses `text`; syntax errors come back as problems with their line. Text deeper or with more
   * nodes than `bounds` is refused before it is parsed.
   */
  static parse(file: string, text: string, bounds: YamlBounds = DOCUMENT_BOUNDS): YamlRead {
    return YamlSource.parseText(file, text, bounds);
  }

  /**
   * Parses the text of item `index` of the file's `consumers:` list alone (a one-item list),
   * `firstLine` being the file's line it begins on. Its value is that one-item list; its lines
   * and problems are told for the field as it is in the whole file (`consumers[index]…`). A
   * syntax error here may be an artefact of the cut: read the whole file to tell it.
   */
  static parseItem(file: string, text: string, index: number, firstLine: number, bounds: YamlBounds): YamlRead {
    return YamlSource.parseText(file, text, bounds, { index, firstLine });
  }

  private static parseText(
    file: string,
    text: string,
    bounds: YamlBounds,
    item?: { index: number; firstLine: number },
  ): YamlRead {
    const scan = scanYaml(text, bounds);
    if (!scan.ok) {
      const line = lineAt(text, scan.offset) + (item ? item.firstLine - 1 : 0);
      return { ok: false, problems: [`${file}:${line}: ${scan.reason}`], beyond: scan.bound };
    }
    const lines = new LineCounter();
    // keys are told apart below, in one pass: the library's own test compares each key with every other
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
    const at = (offset: number) => `${file}:${lines.linePos(offset).line}`;
    const errors = [...doc.errors.map((error) => ({ offset: error.pos[0], message: error.message }))];
    if (errors.length === 0) errors.push(...repeatedKeys(doc));
    if (errors.length > 0) {
      return { ok: false, problems: errors.map((error) => `${at(error.offset)}: invalid YAML: ${error.message}`) };
    }
    try {
      return { ok: true, source: new YamlSource(file, doc.toJS({ maxAliasCount: 100 }), doc, lines, scan.nodes, item) };
    } catch (error) {
      return { ok: false, problems: [`${at(0)}: invalid YAML: ${(error as Error).message}`] };
    }
  }

  /**
   * Reads and parses `file`; a file that cannot be read is a problem naming its errno code. With
   * `limit`, a file that is not regular or is larger is refused before it is read.
   */
  static async read(file: string, limit?: SizeLimit): Promise<YamlRead> {
    if (limit) {
      const bounded = await readBounded(file, limit);
      return bounded.ok ? YamlSource.parse(file, bounded.text) : { ok: false, problems: [bounded.problem] };
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      return {
        ok: false,
        problems: [`${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`],
      };
    }
    return YamlSource.parse(file, text);
  }

  /** 1-based line of the field at `path`, or of its nearest existing parent. */
  lineOf(path: FieldPath): number {
    const { item } = this;
    if (item === undefined) return this.lineIn(path);
    // only the item is here: its fields are found in the one-item list, anything above it is where it begins
    const inItem = path[0] === 'consumers' && path[1] === item.index;
    return this.lineIn(inItem ? [0, ...path.slice(2)] : [0]) + item.firstLine - 1;
  }

  private lineIn(path: FieldPath): number {
    let node: unknown = this.doc.contents;
    let offset = 0;
    for (const key of path) {
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = node.items.find((item) => String(isScalar(item.key) ? item.key.value : item.key) === String(key));
        if (!pair) break;
        offset = (isScalar(pair.key) ? pair.key.range?.[0] : undefined) ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof key === 'number' && node.items[key] !== undefined) {
        node = node.items[key];
        offset = (node as { range?: [number] | null }).range?.[0] ?? offset;
      } else {
        break;
      }
    }
    return this.lines.linePos(offset).line;
  }

  /** `<file>:<line>` of the field at `path`. */
  at(path: FieldPath): string {
    return `${this.file}:${this.lineOf(path)}`;
  }

  /** `<file>:<line>: <field>: <reason>`. */
  problem(path: FieldPath, reason: string): string {
    return `${this.at(path)}: ${formatPath(path)}: ${reason}`;
  }

  /**
   * Validates `value`, found at `path` in this file, with `schema` (which may be async). Each
   * issue is added to `problems`; an unknown key is reported on its own line.
   */
  async check<T>(
    schema: z.ZodType<T>,
    value: unknown,
    problems: string[],
    path: FieldPath = [],
    apart?: ApartIssue,
  ): Promise<Checked<T>> {
    const result = await schema.safeParseAsync(value, { error: required });
    if (result.success) return { ok: true, value: result.data };
    let onlyApart = true;
    for (const issue of result.error.issues) {
      if (apart?.(issue)) continue;
      onlyApart = false;
      const where = [...path, ...issue.path];
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) problems.push(this.problem([...where, key], 'unknown field'));
      } else {
        problems.push(this.problem(where, issue.message));
      }
    }
    return apart ? { ok: false, onlyApart } : { ok: false };
  }

  /**
   * Problems for the items of the list at `path` whose `field` repeats an earlier item's, e.g.
   * `consumers[1].login: duplicate login "app_a" (also consumers[0])`.
   */
  duplicates(list: unknown, path: FieldPath, field: string): string[] {
    if (!Array.isArray(list)) return [];
    const first = new Map<unknown, number>();
    const problems: string[] = [];
    list.forEach((item: unknown, index) => {
      const value = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
      if (typeof value !== 'string') return;
      const earlier = first.get(value);
      if (earlier === undefined) first.set(value, index);
      else
        problems.push(
          this.problem(
            [...path, index, field],
            `duplicate ${field} "${value}" (also ${formatPath([...path, earlier])})`,
          ),
        );
    });
    return problems;
  }
}

/**
 * `docs/glossary.md` stays a glossary: its entries in alphabetical order, each defining one of
 * holdfast's words and naming the file(s) that own it (a link), and the words the code uses
 * everywhere are among them. Whether the linked files exist is the doc links' test's to say.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const glossary = readFileSync(join(root, 'docs/glossary.md'), 'utf8');

/** Each entry: its term (what is in bold at the start of its paragraph) and its text. */
const entries = glossary
  .split(/\n\n/)
  .map((paragraph) => /^\*\*([^*]+?)\.\*\*\s([\s\S]*)$/.exec(paragraph))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ term: m[1]!, text: m[2]! }));

const pointer = (text: string) => /^See \*/.test(text);

describe('the glossary', () => {
  it('lists its entries alphabetically', () => {
    const terms = entries.map((e) => e.term.toLowerCase());
    expect(terms.length).toBeGreaterThan(40);
    expect(terms).toEqual([...terms].sort());
  });

  it('names the file(s) that own each word it defines', () => {
    const unowned = entries.filter((e) => !pointer(e.text) && !/\]\(\.\.\/[^)]+\)/.test(e.text)).map((e) => e.term);
    expect(unowned).toEqual([]);
  });

  it('defines the words the code uses everywhere', () => {
    const terms = entries.map((e) => e.term.toLowerCase()).join(' | ');
    const words = [
      'revision',
      'wait',
      'due set',
      'round',
      'lease',
      'ticket',
      'seal',
      'memo',
      'claim',
      'sweep',
      'brake',
      'contested',
      'finding',
      'loss wave',
      'plan',
      'node',
      'history',
      'horizon',
      'probe',
      'quiet heal',
      'could not ask',
      'layout',
      'shard',
      'orphan',
      'removal guard',
      'grant secret',
      'fingerprint',
      'deep check',
    ];
    expect(words.filter((word) => !terms.includes(word))).toEqual([]);
  });

  it('says one name per concept: the docs write none of the retired words outside code', () => {
    /** A retired word, and the glossary's word for what it meant. */
    const retired: readonly (readonly [RegExp, string])[] = [
      [/\bsummar(y|ies)\b/i, 'brief'],
      [/\btimers?\b/i, 'wait (a wait job: kind `wait`)'],
      [/\bresync\b/i, 'sweep'],
      [/\blearnt\b/i, 'learned'],
      [/\bverif(y|ies|ied|ying)\b/i, 'check (`verifyEvery` and the `verify` wait in code)'],
    ];
    const pages = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const found = pages.flatMap((page) => {
      const prose = readFileSync(join(root, page), 'utf8')
        .replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ''))
        .replace(/`[^`\n]*`/g, '``')
        .replace(/\]\([^)]*\)/g, ']()');
      return prose
        .split('\n')
        .flatMap((line, i) =>
          retired
            .filter(([word]) => word.test(line))
            .map(([word, instead]) => `${page}:${i + 1}: ${word.exec(line)![0]} (say: ${instead})`),
        );
    });
    expect(found).toEqual([]);
  });
});

describe('the sources cite only what the repository holds', () => {
  it('no comment cites a rule of a design file that is not in the repository ("DESIGN rule N")', () => {
    const files = ['machines', 'workers', 'src'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.ts'))
        .map((name) => `${dir}/${name}`),
    );
    const cited = files.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/DESIGN rule \d/.test(line) ? [`${file}:${i + 1}`] : [])),
    );
    expect(cited).toEqual([]);
  });

  it('the code names the check state and the wait job one way: their former names only where a former name is read', () => {
    const sources = ['machines', 'workers', 'src'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.ts'))
        .map((name) => `${dir}/${name}`),
    );
    /** A former name as code would write it: the state, or the job kind (the record's `timer` field is not one). */
    const formerly = [/\bverifying\b/, /\bkind(: | === )'timer'|case 'timer':|'timer' as const/];
    const named = sources.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          formerly.some((name) => name.test(line)) && !/former/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(named).toEqual([]);
  });

  it("the code names a consumer's brief one way: no type, function or file named after a summary", () => {
    const sources = ['machines', 'workers', 'src'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.ts'))
        .map((name) => `${dir}/${name}`),
    );
    const named = sources.flatMap((file) => [
      ...(/summar/i.test(file) ? [file] : []),
      ...readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /\b[A-Za-z]*Summar[a-z]*\b|\bsummar(y|ies)[A-Z][A-Za-z]*|\bsummarize\b/.test(line)
            ? [`${file}:${i + 1}`]
            : [],
        ),
    ]);
    expect(named).toEqual([]);
  });
});

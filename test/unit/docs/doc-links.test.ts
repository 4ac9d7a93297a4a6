/**
 * Every relative link in README.md and docs/*.md points to a file that exists, and every
 * `#anchor` (in the same file or another .md) names a heading of its target, by GitHub's rule
 * for heading anchors: lowercase, punctuation dropped except `-` and `_`, spaces to `-`, and a
 * repeated heading's anchor suffixed `-1`, `-2`…
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The lines of `markdown` outside fenced code blocks. */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A heading's anchor as GitHub makes it. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the headings of `markdown` define. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every link target in `markdown`'s prose, inline code left out. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(markdown)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  }
  return targets;
}

/** What is wrong with a link from `document` to `target`; undefined when it resolves. */
function problem(document: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:: not a file here
  const hash = target.indexOf('#');
  const path = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? join(ROOT, document) : resolve(dirname(join(ROOT, document)), decodeURIComponent(path));
  if (!existsSync(file)) return `${document}: ${target}: no such file ${relative(ROOT, file)}`;
  if (anchor === undefined || !file.endsWith('.md')) return undefined;
  if (!anchors(readFileSync(file, 'utf8')).has(anchor))
    return `${document}: ${target}: ${relative(ROOT, file)} has no heading #${anchor}`;
  return undefined;
}

describe('links in README.md and docs/', () => {
  it('finds the documents', () => {
    expect(DOCUMENTS).toContain('README.md');
    expect(DOCUMENTS).toContain('docs/configuration.md');
  });

  it('computes anchors as GitHub does', () => {
    expect(slug('The HTTP server: dashboard, `/queues`, `/status`')).toBe('the-http-server-dashboard-queues-status');
    expect(slug('`holdfast plan`: what a change would do')).toBe('holdfast-plan-what-a-change-would-do');
    expect(slug('Environment variables (tests only)')).toBe('environment-variables-tests-only');
    expect([...anchors('# A\n\n```\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1']);
  });

  for (const document of DOCUMENTS) {
    it(`${document}: every relative link and anchor resolves`, () => {
      const markdown = readFileSync(join(ROOT, document), 'utf8');
      // an unclosed fence would hide every link after it
      expect(markdown.split('\n').filter((line) => /^\s*(```|~~~)/.test(line)).length % 2).toBe(0);
      const targets = linkTargets(markdown);
      const problems = targets.map((target) => problem(document, target)).filter((found) => found !== undefined);
      expect(problems.join('\n')).toBe('');
    });
  }
});

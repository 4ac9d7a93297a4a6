/**
 * `docs/extending.md` followed as a newcomer would: every file it names exists, and every symbol
 * it links to a file is declared in that file. The guide's convention (said at its top): a file
 * is named in backticks (`machines/delays.ts`) or as a link to it; a symbol is a link from its
 * name in backticks to the file that declares it, [`quarantineDue`](../machines/delays.ts), or
 * to a class's member, [`ConsumerRun.perform`](../workers/consumer-run.ts).
 *
 * "Declared" is read off the file's syntax tree (TypeScript's parser), not its text: a function,
 * class, interface, type, enum, variable, a re-export, or a member (of a class, an interface or
 * an object literal: a guard in `setup({ guards })`, an entry of `TIMING_SETTINGS`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const GUIDE = 'docs/extending.md';

/** A place in the guide: its line, for the failure's words. */
interface Mention {
  line: number;
  text: string;
}

/** Lines of the guide outside its code blocks (the snippets quote code, they do not name files). */
function proseLines(markdown: string): Mention[] {
  let inCode = false;
  return markdown.split('\n').flatMap((text, i) => {
    if (text.trimStart().startsWith('```')) {
      inCode = !inCode;
      return [];
    }
    return inCode ? [] : [{ line: i + 1, text }];
  });
}

const REPO_PATH = /^(?:src|machines|workers|test|scripts|docs|examples|deploy)\/[\w./-]*$/;

/** Files and folders named in backticks: `machines/delays.ts`, `workers/`. */
function pathsNamed(markdown: string): Array<Mention & { path: string }> {
  return proseLines(markdown).flatMap(({ line, text }) =>
    [...text.matchAll(/`([^`\s]+)`/g)]
      .map((m) => m[1]!)
      .filter((t) => REPO_PATH.test(t))
      .map((path) => ({ line, text, path })),
  );
}

/** Relative links, resolved from the guide's folder: [text](../machines/delays.ts), [x](architecture.md#…). */
function linksIn(markdown: string, from = GUIDE): Array<Mention & { label: string; path: string }> {
  return proseLines(markdown).flatMap(({ line, text }) =>
    [...text.matchAll(/\[([^\]]+)\]\(([^)\s]+)\)/g)]
      .filter((m) => !/^[a-z]+:/.test(m[2]!) && !m[2]!.startsWith('#'))
      .map((m) => ({
        line,
        text,
        label: m[1]!,
        path: relative(root, resolve(root, dirname(from), m[2]!.split('#')[0]!)),
      })),
  );
}

/** Links whose text is a symbol in backticks: [`name`](file) or [`Class.member`](file). */
function symbolsLinked(markdown: string): Array<Mention & { symbol: string; path: string }> {
  return linksIn(markdown).flatMap((link) => {
    const symbol = /^`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?)`$/.exec(link.label)?.[1];
    return symbol === undefined ? [] : [{ ...link, symbol }];
  });
}

/** Every name `file` declares, members also as `Owner.member`. */
function declaredIn(file: string): Set<string> {
  const source = ts.createSourceFile(file, readFileSync(resolve(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  const nameOf = (node: ts.Node): string | undefined => {
    const name = (node as { name?: ts.Node }).name;
    return name !== undefined && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name))
      ? name.text
      : undefined;
  };
  const visit = (node: ts.Node, owner: string | undefined) => {
    let inner = owner;
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isClassDeclaration(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isEnumDeclaration(node) ||
      ts.isVariableDeclaration(node) ||
      ts.isExportSpecifier(node) ||
      ts.isPropertyAssignment(node) ||
      ts.isShorthandPropertyAssignment(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isPropertyDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isPropertySignature(node) ||
      ts.isMethodSignature(node)
    ) {
      const name = nameOf(node);
      if (name !== undefined) {
        names.add(name);
        if (owner !== undefined) names.add(`${owner}.${name}`);
        if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) inner = name;
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, undefined);
  return names;
}

const guide = readFileSync(resolve(root, GUIDE), 'utf8');
const where = (m: Mention) => `${GUIDE}:${m.line}`;

describe('the extension guide, followed', () => {
  it('names its files and symbols the way the test reads them', () => {
    expect(pathsNamed(guide).length).toBeGreaterThan(20);
    expect(symbolsLinked(guide).length).toBeGreaterThan(30);
    expect(symbolsLinked('[`quarantineDue`](../machines/delays.ts)')).toMatchObject([
      { symbol: 'quarantineDue', path: 'machines/delays.ts' },
    ]);
    expect([...declaredIn('workers/consumer-run.ts')]).toEqual(
      expect.arrayContaining(['ConsumerRun', 'ConsumerRun.perform', 'LOCK_MARGIN_MS']),
    );
  });

  it('names only files that exist', () => {
    const named = [...pathsNamed(guide), ...linksIn(guide)];
    const missing = named
      .filter(({ path }) => !existsSync(resolve(root, path)))
      .map((m) => `${where(m)}: ${m.path} does not exist`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('links each symbol to the file that declares it', () => {
    const declared = new Map<string, Set<string>>();
    const undeclared = symbolsLinked(guide).flatMap((m) => {
      if (!existsSync(resolve(root, m.path))) return [`${where(m)}: ${m.symbol}: ${m.path} does not exist`];
      if (!m.path.endsWith('.ts')) return [`${where(m)}: ${m.symbol} is linked to ${m.path}, not to a source file`];
      if (!declared.has(m.path)) declared.set(m.path, declaredIn(m.path));
      return declared.get(m.path)!.has(m.symbol) ? [] : [`${where(m)}: ${m.symbol} is not declared in ${m.path}`];
    });
    expect(undeclared).toEqual([]);
  });
});

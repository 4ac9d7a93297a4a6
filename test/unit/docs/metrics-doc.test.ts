/**
 * The metrics and their reference: every metric a holdfast process serves on `/metrics` (but prom-client's own,
 * `holdfast_process_*`) is named in the docs (`docs/operating.md` lists them where `/metrics` is described; a few are
 * told where their subject is: security, topologies, scaling), and every `holdfast_*` metric the docs name is one it
 * serves (a metric renamed or removed leaves no name behind).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';

const root = resolve(import.meta.dirname, '../../..');
const docs = join(root, 'docs');
const pages = readdirSync(docs)
  .filter((f) => f.endsWith('.md'))
  .map((f) => ({ f, text: readFileSync(join(docs, f), 'utf8') }));
const served = new Metrics().registry.getMetricsAsArray().map((m) => m.name);

describe('the metrics in the docs', () => {
  it('names every metric a process serves', () => {
    const own = served.filter((name) => !name.startsWith('holdfast_process_'));
    expect(own.length).toBeGreaterThan(25);
    expect(own.filter((name) => !pages.some((p) => p.text.includes(name)))).toEqual([]);
  });

  it('names no metric that is not served (a histogram by its name or its _count, _sum, _bucket)', () => {
    const known = new Set(served);
    const isServed = (name: string) => known.has(name) || known.has(name.replace(/_(count|sum|bucket)$/, ''));
    const stale = pages.flatMap(({ f, text }) =>
      [...text.matchAll(/\bholdfast_[a-z_]+[a-z]\b/g)].filter((m) => !isServed(m[0])).map((m) => `${f}: ${m[0]}`),
    );
    expect(stale).toEqual([]);
  });
});

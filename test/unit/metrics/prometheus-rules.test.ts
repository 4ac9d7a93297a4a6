/**
 * The alert rules holdfast ships (deploy/prometheus/), checked and unit-tested by Prometheus's
 * own promtool (Debian's `prometheus` package; scripts/install-deps.sh installs it), and held to
 * the metrics holdfast really exposes.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../../../src/metrics/metrics.js';
import { readSettings } from '../../backends/settings.js';

const dir = resolve(import.meta.dirname, '../../../deploy/prometheus');
const { promtool } = readSettings().binaries;

function run(...args: string[]): { code: number | null; output: string } {
  const result = spawnSync(promtool, args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  if (result.error)
    throw new Error(`${promtool} is not usable here (run scripts/install-deps.sh): ${result.error.message}`);
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

interface Rule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }>;
}

const rules = (
  parse(readFileSync(join(dir, 'holdfast-rules.yml'), 'utf8')) as { groups: Array<{ rules: Rule[] }> }
).groups.flatMap((g) => g.rules);
const tests = (
  parse(readFileSync(join(dir, 'holdfast-rules.test.yml'), 'utf8')) as { tests: RuleTest[] }
).tests.flatMap((t) => t.alert_rule_test);

describe('the shipped alert rules', () => {
  it('are valid rules to promtool', () => {
    const { code, output } = run('check', 'rules', 'holdfast-rules.yml');
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(code).toBe(0);
  });

  it('pass their promtool unit tests', () => {
    const { code, output } = run('test', 'rules', 'holdfast-rules.test.yml');
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('each say what, where and what to do, and each have a case that fires and one that does not', () => {
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'HoldfastConsumerNotServed',
        'HoldfastChecksSilent',
        'HoldfastBrakeEngaged',
        'HoldfastGrantSecretBlocked',
        'HoldfastStoreUnreachable',
        'HoldfastQueueUnreachable',
        'HoldfastOrphans',
        'HoldfastRemovalsHeldBack',
        'HoldfastBackendNodeNotAnswering',
      ]),
    );
    for (const rule of rules) {
      expect(Object.keys(rule.annotations ?? {}).sort(), rule.alert).toEqual(['description', 'runbook', 'summary']);
      const cases = tests.filter((t) => t.alertname === rule.alert);
      expect(
        cases.some((t) => t.exp_alerts.length > 0),
        `${rule.alert} fires in a test`,
      ).toBe(true);
      expect(
        cases.some((t) => t.exp_alerts.length === 0),
        `${rule.alert} does not fire in a test`,
      ).toBe(true);
    }
  });

  it('name the provider, and the consumer where the metric has one', () => {
    for (const rule of rules.filter((r) => /provider/.test(r.expr))) {
      expect(rule.annotations!.summary, rule.alert).toContain('{{ $labels.provider }}');
      if (/by \(provider, consumer/.test(rule.expr))
        expect(rule.annotations!.summary, rule.alert).toContain('{{ $labels.consumer }}');
    }
  });

  it('use only metrics holdfast exposes', async () => {
    const exposed = new Set((await new Metrics().registry.getMetricsAsJSON()).map((m) => m.name));
    const used = new Set(rules.flatMap((r) => [...r.expr.matchAll(/\bholdfast_[a-z_]+/g)].map((m) => m[0])));
    expect(used.size).toBeGreaterThan(5);
    expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
  });
});

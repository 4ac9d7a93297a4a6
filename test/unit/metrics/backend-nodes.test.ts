/**
 * `holdfast_backend_nodes{provider,role,state}`: the nodes of a provider's backend as its adapter knows them, counted
 * when scraped.
 */
import { describe, expect, it } from 'vitest';
import type { BackendNodeReport } from '../../../src/adapters/adapter.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import type { QueueFacts, ScrapeSources } from '../../../src/metrics/scrape-sources.js';

const facts: QueueFacts = {
  consumers: [],
  unserved: [],
  queueDepth: {},
  dueWaits: { scheduled: 0, due: 0 },
  lastCheckAt: new Map(),
  orphans: new Map(),
  contested: new Map(),
  suspects: new Map(),
};

describe('holdfast_backend_nodes', () => {
  it("counts each provider's nodes by role and whether they answer, as of each scrape", async () => {
    let nodes: BackendNodeReport[] = [
      { address: '10.0.0.5:6379', role: 'master', answering: true },
      {
        address: '10.0.0.6:6379',
        role: 'replica',
        answering: true,
        missing: 3,
        missingWhy: 'applying there failed (NOPERM)',
      },
      { address: '10.0.0.7:6379', role: 'replica', answering: false, why: 'connect ECONNREFUSED' },
    ];
    const sources: ScrapeSources = {
      providers: [
        { name: 'cache', verifyEveryMs: 60_000, checkTimeoutMs: 30_000, nodes: () => nodes },
        { name: 'ledger', verifyEveryMs: 60_000, checkTimeoutMs: 30_000 },
      ],
      queue: () => Promise.resolve(facts),
      store: () => Promise.resolve({ heldRemovals: new Map() }),
      storeUp: () => true,
    };
    const metrics = new Metrics();
    metrics.scrapeFrom(sources);
    const scraped = async () =>
      (await metrics.text()).split('\n').filter((l) => l.startsWith('holdfast_backend_nodes{'));
    expect(await scraped()).toEqual([
      'holdfast_backend_nodes{provider="cache",role="master",state="answering"} 1',
      'holdfast_backend_nodes{provider="cache",role="replica",state="answering"} 1',
      'holdfast_backend_nodes{provider="cache",role="replica",state="not-answering"} 1',
    ]);
    nodes = nodes.map((n) => ({ ...n, answering: true }));
    expect(await scraped()).toEqual([
      'holdfast_backend_nodes{provider="cache",role="master",state="answering"} 1',
      'holdfast_backend_nodes{provider="cache",role="replica",state="answering"} 2',
    ]);
  });

  it('gives each answering node the count of consumers it lacks (holdfast_backend_node_missing_consumers), and none to one that does not answer', async () => {
    let nodes: BackendNodeReport[] = [
      { address: '10.0.0.5:6379', role: 'master', answering: true },
      {
        address: '10.0.0.6:6379',
        role: 'replica',
        answering: true,
        missing: 3,
        missingWhy: 'applying there failed (NOPERM)',
      },
      { address: '10.0.0.7:6379', role: 'replica', answering: false, why: 'connect ECONNREFUSED', missing: 9 },
    ];
    const sources: ScrapeSources = {
      providers: [{ name: 'cache', verifyEveryMs: 60_000, checkTimeoutMs: 30_000, nodes: () => nodes }],
      queue: () => Promise.resolve(facts),
      store: () => Promise.resolve({ heldRemovals: new Map() }),
      storeUp: () => true,
    };
    const metrics = new Metrics();
    metrics.scrapeFrom(sources);
    const scraped = async () =>
      (await metrics.text()).split('\n').filter((l) => l.startsWith('holdfast_backend_node_missing_consumers{'));
    expect(await scraped()).toEqual([
      'holdfast_backend_node_missing_consumers{provider="cache",node="10.0.0.5:6379",role="master"} 0',
      'holdfast_backend_node_missing_consumers{provider="cache",node="10.0.0.6:6379",role="replica"} 3',
    ]);
    nodes = nodes.map((n) => ({ address: n.address, role: n.role, answering: true }));
    expect(await scraped()).toEqual([
      'holdfast_backend_node_missing_consumers{provider="cache",node="10.0.0.5:6379",role="master"} 0',
      'holdfast_backend_node_missing_consumers{provider="cache",node="10.0.0.6:6379",role="replica"} 0',
      'holdfast_backend_node_missing_consumers{provider="cache",node="10.0.0.7:6379",role="replica"} 0',
    ]);
  });
});

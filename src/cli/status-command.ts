/**
 * `holdfast status`: counts per provider and state, every consumer not served (every one with
 * `--all`), and why it is red; exits 1 when anything is not served. It creates nothing, and
 * answers within the status's budget ({@link STATUS_BUDGET_MS}), naming a store or queue Redis
 * that does not answer in time, and for how long.
 */
import { DESCRIBED_ADAPTERS } from '../adapters/described-registry.js';
import { queueWhere, statusConnections } from '../engine/connect.js';
import type { HoldfastConfig } from '../config/config.js';
import { BoundedStatus, STATUS_BUDGET_MS } from '../status/bounded-status.js';
import { DependencyWatch } from '../status/dependency-watch.js';
import { formatStatus } from '../status/format-status.js';
import type { StatusReport } from '../status/status-report.js';
import { load } from './load.js';
import { printOut } from '../text/terminal-text.js';

/** The status as read from the configured store and queue Redis; red naming either when it cannot be read in time. */
export async function readStatus(config: HoldfastConfig, options: { all?: boolean }): Promise<StatusReport> {
  const watch = new DependencyWatch();
  const connections = statusConnections(config, STATUS_BUDGET_MS, (dependency, error) =>
    watch.noteConnection(dependency, error),
  );
  try {
    const status = new BoundedStatus(
      { ...connections, providers: config.providers },
      { store: config.store.url, queue: queueWhere(config) },
      { watch },
    );
    return await status.read(options);
  } finally {
    await connections.close();
  }
}

export async function statusCommand(options: { config?: string; json?: boolean; all?: boolean }): Promise<number> {
  // the configuration as written, without any adapter's driver: the status reaches no backend
  const { config } = await load(options.config, { readOnly: true, adapters: DESCRIBED_ADAPTERS });
  const report = await readStatus(config, options);
  printOut(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatStatus(report)}\n`);
  return report.healthy ? 0 : 1;
}

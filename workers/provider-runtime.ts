/** What a worker needs of one provider: its configuration, its adapter and its machine. */
import type { ConsumerMachine } from '../machines/consumer-machine.js';
import { createConsumerMachine } from '../machines/consumer-machine.js';
import type { Adapter } from '../src/adapters/adapter.js';
import { connectAdapter, type ProviderConfig } from '../src/config/config.js';

export interface ProviderRuntime {
  config: ProviderConfig;
  adapter: Adapter;
  machine: ConsumerMachine;
  /**
   * How many of its consumers have been asked about, as the queue's Redis last said when a job
   * released its lock (undefined until then): what its deep checks' budget is shared by.
   */
  fleet: { consumers: number | undefined };
}

/** Connects a provider's adapter (lazily: a backend that is down does not fail start-up). */
export function providerRuntime(config: ProviderConfig, adapter: Adapter = connectAdapter(config)): ProviderRuntime {
  return { config, adapter, machine: createConsumerMachine(config.timing), fleet: { consumers: undefined } };
}

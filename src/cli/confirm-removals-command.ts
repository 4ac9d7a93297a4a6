/**
 * `holdfast confirm-removals <provider>`: a person confirms the change the mass-removal guard
 * holds back. Exactly that change is confirmed (by its digest): the running desired-state sync
 * applies it on its next pass, and a file edited since is judged afresh, not confirmed.
 */
import { connectCoordination, connectStore } from '../engine/engine.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { load } from './load.js';
import { printOut } from '../status/terminal-text.js';

export async function confirmRemovalsCommand(provider: string, options: { config?: string }): Promise<void> {
  const { config } = await load(options.config);
  const configured = config.providers.find((p) => p.name === provider);
  if (!configured) {
    throw new HoldfastError(
      'PROVIDER_UNKNOWN',
      `no provider "${provider}" in ${config.source}; known: ${config.providers.map((p) => p.name).join(', ')}`,
    );
  }
  const { client, store } = await connectStore(config);
  const { redis, coordination } = connectCoordination(config);
  try {
    const held = (await store.providerStatus(provider))?.heldRemovals;
    if (!held)
      throw new HoldfastError(
        'NOTHING_HELD_BACK',
        `no removals are held back for provider ${provider}; nothing to confirm`,
      );
    await coordination.notes.confirmRemovals(provider, held.change);
    printOut(
      `confirmed: ${held.removals} of ${held.of} consumers of ${provider} are to be removed as ${held.file} declared it when held back; ` +
        `the running holdfast applies it within ${config.sync.pollEveryMs} ms unless the file changed since (then it is judged afresh)\n`,
    );
  } finally {
    redis.disconnect();
    await client.close();
  }
}

/**
 * `holdfast confirm-removals <provider> --change <digest>`: a person confirms the change the mass-removal guard holds
 * back, naming it by the digest `status` and `plan` print. Exactly that change is confirmed: when the change held back
 * now is another (the file was edited since the person looked), nothing is confirmed and the command says what is held
 * now. The confirmation is sealed (`queue/note-seal.ts`) over the change and when it was held back: the running
 * desired-state sync applies it on its next pass, and no later change, nor a value written into the queue's Redis by
 * hand, is confirmed by it.
 */
import { CHANGE_SHOWN, shortChange } from '../desired/desired-change.js';
import { connectCoordination, connectStore } from '../engine/engine.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import type { HeldRemovals } from '../store/consumer-store.js';
import { load } from './load.js';
import { printOut } from '../text/terminal-text.js';

/** The held change in words: what `status` says of it (`what`: `would be removed`, `to be removed`). */
function heldWords(provider: string, held: HeldRemovals, what: string): string {
  return (
    `change ${shortChange(held.change)}, held back since ${held.since.toISOString()}: ${held.removals} of ${held.of} consumers of ${provider} ` +
    `${what} by ${held.file}, e.g. ${held.sample.join(', ')}`
  );
}

/** Whether `named` (what the person typed) names `change`: its first CHANGE_SHOWN hex digits at least. */
function names(named: string, change: string): boolean {
  const digits = named.trim().toLowerCase();
  return /^[0-9a-f]+$/.test(digits) && digits.length >= CHANGE_SHOWN && change.startsWith(digits);
}

export async function confirmRemovalsCommand(
  provider: string,
  options: { config?: string; change: string },
): Promise<void> {
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
    if (!names(options.change, held.change))
      throw new HoldfastError(
        'CHANGE_DIFFERS',
        `nothing confirmed: the change held back for ${provider} now is not the one named (${options.change.slice(0, 64)}); ` +
          `held now: ${heldWords(provider, held, 'would be removed')}. Review it (holdfast status, holdfast plan); to confirm it: ` +
          `holdfast confirm-removals ${provider} --change ${shortChange(held.change)}`,
      );
    await coordination.notes.confirmRemovals(provider, { change: held.change, since: held.since.getTime() });
    printOut(
      `confirmed: ${heldWords(provider, held, 'to be removed')}; ` +
        `the running holdfast applies it within ${config.sync.pollEveryMs} ms unless the file changed since (then it is judged afresh)\n`,
    );
  } finally {
    redis.disconnect();
    await client.close();
  }
}

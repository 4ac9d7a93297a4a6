/**
 * What a backend lets every login do beyond its provider's policy (PostgreSQL's PUBLIC: `Adapter.publicRights`), said
 * as a warning once at start, per provider, by the process that runs the sync; `holdfast doctor` says the same on
 * demand. Not a red status: it is the server's configuration, not a consumer left unserved, and holdfast does not
 * change it; a default server would otherwise be red for ever.
 */
import type { Adapter } from '../adapters/adapter.js';
import type { Logger } from '../logging/logger.js';

/** How long a backend is given to answer what PUBLIC holds. */
const ASK_MS = 10_000;

export async function warnPublicRights(
  providers: ReadonlyMap<string, { adapter: Adapter }>,
  logger: Logger,
): Promise<void> {
  await Promise.all(
    [...providers].map(async ([provider, { adapter }]) => {
      if (!adapter.publicRights) return;
      try {
        for (const line of await adapter.publicRights({ signal: AbortSignal.timeout(ASK_MS) }))
          logger.warn({ provider }, `provider ${provider}: ${line} (holdfast does not change PUBLIC)`);
      } catch (error) {
        logger.debug(
          { provider, err: error instanceof Error ? error.message : String(error) },
          'what PUBLIC holds could not be read',
        );
      }
    }),
  );
}

/** What every command starts with: the environment, the configuration, a scrubber and a logger. */
import type { AdapterKind } from '../adapters/adapter.js';
import type { HoldfastConfig } from '../config/config.js';
import { configSecrets } from '../config/config-secrets.js';
import { readEnvironment } from '../config/environment.js';
import { loadConfig } from '../config/load-config.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { Scrubber } from '../logging/scrubber.js';

export interface Loaded {
  config: HoldfastConfig;
  scrubber: Scrubber;
  logger: Logger;
}

/** Knows every admin secret read by this process, so even the last words of a failing command are scrubbed. */
export const processScrubber = new Scrubber();

/**
 * `adapters`: the adapter kinds to read the configuration with (default: every adapter with its
 * driver, loaded only then: a command that never reaches a backend gives `DESCRIBED_ADAPTERS`).
 */
export async function load(
  configOption: string | undefined,
  options: { readOnly?: boolean; adapters?: ReadonlyMap<string, AdapterKind> } = {},
): Promise<Loaded> {
  const environment = readEnvironment();
  const path = configOption ?? environment.configPath;
  if (!path)
    throw new HoldfastError('CONFIG_INVALID', 'no configuration file: give --config <file> or set HOLDFAST_CONFIG');
  const adapters = options.adapters ?? (await import('../adapters/registry.js')).ADAPTERS;
  const config = await loadConfig(path, { adapters, environment, readOnly: options.readOnly === true });
  const scrubber = processScrubber;
  scrubber.add(...configSecrets(config));
  const logger = createLogger({ level: config.log.level, format: config.log.format, scrubber });
  return { config, scrubber, logger };
}

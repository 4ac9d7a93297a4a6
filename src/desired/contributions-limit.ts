/**
 * The bounds on a provider's contributions file: how large it may be before it is refused
 * unread, how many consumers it may declare, and how deep and how many YAML nodes each document
 * parsed at once may hold (see `src/config/yaml-bounds.ts`).
 */
import type { ProviderConfig } from '../config/config.js';
import type { SizeLimit } from '../config/bounded-read.js';
import { DEFAULT_MAX_CONSUMERS } from '../config/max-consumers.js';
import { DEFAULT_CONTRIBUTIONS_MAX_BYTES } from '../text/size.js';
import { DOCUMENT_BOUNDS, type YamlBounds } from '../config/yaml-bounds.js';

export function contributionsLimit(provider: Pick<ProviderConfig, 'contributionsMaxBytes'>): SizeLimit {
  return {
    maxBytes: provider.contributionsMaxBytes ?? DEFAULT_CONTRIBUTIONS_MAX_BYTES,
    setting: 'sync.contributionsMaxBytes',
  };
}

/** The most consumers `provider`'s file may declare, and the setting that says so. */
export function consumersLimit(provider: Pick<ProviderConfig, 'maxConsumers'>): { max: number; setting: string } {
  return provider.maxConsumers ?? { max: DEFAULT_MAX_CONSUMERS, setting: 'sync.maxConsumers' };
}

/** A contributions file that is not of the plain shape, parsed as one document. */
export const FILE_BOUNDS: YamlBounds = {
  ...DOCUMENT_BOUNDS,
  what: "holdfast's bound on a contributions file read whole",
};

/** One entry of a file of the plain shape, parsed alone. */
export const ENTRY_BOUNDS: YamlBounds = { ...DOCUMENT_BOUNDS, what: "holdfast's bound on one contributions entry" };

/** How large a provider's contributions file may be before it is refused unread. */
import type { ProviderConfig } from '../config/config.js';
import type { SizeLimit } from '../config/bounded-read.js';
import { DEFAULT_CONTRIBUTIONS_MAX_BYTES } from '../config/size.js';

export function contributionsLimit(provider: Pick<ProviderConfig, 'contributionsMaxBytes'>): SizeLimit {
  return {
    maxBytes: provider.contributionsMaxBytes ?? DEFAULT_CONTRIBUTIONS_MAX_BYTES,
    setting: 'sync.contributionsMaxBytes',
  };
}

/** The secrets a resolved configuration holds (admin passwords), for the scrubber to know. */
import type { HoldfastConfig } from './config.js';

export function configSecrets(config: HoldfastConfig): string[] {
  const secrets = [
    config.queue.connection.password,
    config.store.password,
    ...config.providers.map((p) => p.admin.password),
    config.http.auth?.password,
  ];
  return secrets.filter((s): s is string => typeof s === 'string' && s.length > 0);
}

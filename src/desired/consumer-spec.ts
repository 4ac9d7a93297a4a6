/**
 * What one contributions file declares for one provider: each consumer by its key, with the
 * desired spec a worker delivers to its machine (never its password, only where to read it).
 */
import type { DesiredSpec } from '../store/consumer-record.js';
import type { DeclaredBriefs } from './declared-briefs.js';

export interface DeclaredConsumer {
  /** `<provider>/<id>`: the consumer's key everywhere (record id, logs, CLI). */
  key: string;
  id: string;
  /** Refused by the provider's policy when its `problems` are not empty: then it is never applied. */
  desired: DesiredSpec;
}

export interface DesiredState {
  provider: string;
  consumers: DeclaredConsumer[];
}

/**
 * A contributions file read and validated whole, holding each consumer in brief, and the full specs of those that
 * changed against what was delivered (each item parsed once: `load-contributions.ts`).
 */
export interface ContributionsRead {
  provider: string;
  consumers: DeclaredBriefs;
  /**
   * The full specs of the items at `indexes` (in that order), as validated; only items whose digest differed from the
   * one delivered were kept (asking for another is a RangeError).
   */
  specs(indexes: readonly number[]): Promise<DeclaredConsumer[]>;
}

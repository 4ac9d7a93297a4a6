/**
 * A consumer as the desired state declares it: never its password, only where to read it.
 */
export interface ConsumerSpec {
  /** `<provider>/<id>`: the consumer's key everywhere (record id, logs, CLI). */
  key: string;
  provider: string;
  id: string;
  login: string;
  /** Adapter-specific values, already validated by the provider's adapter. */
  values: unknown;
  /** Absolute path of the grant secret file. */
  secretPath: string;
  /** sha256 over login, values and secretPath (canonical JSON). Changes when the spec does. */
  specHash: string;
  /** Where it was declared, e.g. `/etc/holdfast/cache.yaml:12`. */
  source: string;
}

/** A declared consumer the provider's policy refuses. It is never applied. */
export interface RejectedConsumer {
  key: string;
  provider: string;
  id: string;
  login: string;
  source: string;
  /** One sentence per problem, naming the field. */
  problems: string[];
}

/** What one contributions file declares for one provider. */
export interface DesiredState {
  provider: string;
  consumers: ConsumerSpec[];
  rejected: RejectedConsumer[];
}

/** Consumer ids and provider names: safe in record ids, job ids, log lines and URLs. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function consumerKey(provider: string, id: string): string {
  return `${provider}/${id}`;
}

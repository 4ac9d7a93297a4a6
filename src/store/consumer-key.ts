/**
 * A consumer's key, `<provider>/<id>`: its record's `_id`, its jobs' and its entries in the
 * queue's Redis, its name in logs, the CLI and the API. Neither part holds a `/`
 * (see `text/names.ts`).
 */

export function consumerKey(provider: string, id: string): string {
  return `${provider}/${id}`;
}

/** The provider of the consumer `key`. */
export function providerOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/** The consumer's id within its provider. */
export function consumerIdOf(key: string): string {
  return key.slice(key.indexOf('/') + 1);
}

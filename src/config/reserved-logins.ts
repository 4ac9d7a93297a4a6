/**
 * The logins no consumer of a provider may have, each with why: the provider's admin (or, when
 * the admin connection names none, the login its adapter connects as by default), the queue's
 * and the record store's users, and `default` (Redis's built-in user, and a name no consumer
 * needs). A consumer naming one is refused before anything is sent (see `src/policy/spec-check.ts`).
 */
import type { AdapterKind } from '../adapters/adapter.js';

export interface ReservedLogins {
  logins: string[];
  /** Login → why it is reserved, e.g. `is the admin login of provider cache`. */
  reasons: Map<string, string>;
}

export interface ReservedFor {
  provider: { name: string; adapter: Pick<AdapterKind, 'defaultAdminLogin'>; admin: { username?: string | undefined } };
  queueUsername?: string | undefined;
  storeUsername?: string | undefined;
}

/** The reserved logins of one provider; the first reason given for a login is kept. */
export function reservedLogins({ provider, queueUsername, storeUsername }: ReservedFor): ReservedLogins {
  const reasons = new Map<string, string>();
  const reserve = (login: string | undefined, why: string) => {
    if (login !== undefined && !reasons.has(login)) reasons.set(login, why);
  };
  const { username } = provider.admin;
  reserve(username, `is the admin login of provider ${provider.name}`);
  if (username === undefined)
    reserve(
      provider.adapter.defaultAdminLogin,
      `is the login provider ${provider.name} connects as (its admin names no username)`,
    );
  reserve(queueUsername, "is the login of holdfast's queue (queue.username)");
  reserve(storeUsername, "is the login of holdfast's record store (store.username)");
  reserve('default', "is the backends' built-in user (Redis's default), reserved on every provider");
  return { logins: [...reasons.keys()], reasons };
}

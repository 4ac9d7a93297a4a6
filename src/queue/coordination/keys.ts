/**
 * Every Redis key holdfast builds for itself, in one place (BullMQ builds its own under the
 * queue's prefix). All of them start with `<queue prefix>:holdfast`: with a Redis Cluster, give
 * the queue a hash-tagged prefix (`{holdfast}`) and every key here shares one slot, so each
 * script's keys do too. With `queue.shards: N` this table is made once per shard, under the
 * shard's prefix (`{holdfast-0}` …), and which shard holds which entry is said in
 * `sharded-coordination.ts`. The names are stored data: renaming one forgets what it holds.
 */

/** holdfast's own namespace inside the queue's prefix. */
export function holdfastPrefix(queuePrefix: string): string {
  return `${queuePrefix}:holdfast`;
}

/** The keys under `prefix` (see {@link holdfastPrefix}). */
export function coordinationKeys(prefix: string) {
  return {
    /**
     * Every consumer's lock: one actor at a time (a hash by consumer key: `<until, ms> <holder's token>`, the
     * field deleted when released, free once `until` is past by the queue's Redis clock). One hash, so that a batch of
     * claims or releases is one command, not one per consumer.
     */
    locks: `${prefix}:locks`,
    /**
     * A consumer's lock as releases before {@link locks} kept it (a string with a TTL): still honoured by a claim
     * while one is there (see docs/operating.md, upgrading), never written.
     */
    lock: (key: string) => `${prefix}:lock:${key}`,
    /**
     * A removed consumer's mark: when the sync read the removal, ms (a string with a TTL, see
     * `REMOVAL_MARK_MS` in `locks.ts`): no desired spec read before it makes the record again.
     */
    removed: (key: string) => `${prefix}:removed:${key}`,
    /** Each consumer's record revision as last written (a hash by consumer key). */
    revs: `${prefix}:revs`,
    /** What each consumer's checks learned, a JSON check memo (a hash by consumer key). */
    memos: `${prefix}:checks`,
    /** Each consumer's `<state> <revision>`: all the status reads of every consumer (a hash). */
    states: `${prefix}:states`,
    /** Each consumer's record in brief, encoded (see `consumer-brief.ts`; a hash). */
    briefs: `${prefix}:briefs`,
    /** The provider's consumers last found could-not-ask (a set). */
    couldNotAsk: (provider: string) => `${prefix}:could-not-ask:${provider}`,
    /**
     * The provider's suspect consumers (a set): made so at once when a node of its backend comes back as a new
     * incarnation, each removed as its check asks the backend again (rule 13).
     */
    suspects: (provider: string) => `${prefix}:suspects:${provider}`,
    /** The provider's last node event that made its consumers suspect, a JSON suspect event (a string). */
    suspectEvent: (provider: string) => `${prefix}:suspect-event:${provider}`,
    /**
     * When the provider's last node event was seen, ms (a string, only ever moved later): a check that asked before it
     * says nothing of the node since, so its release leaves its consumer suspect (see `scripts.ts`, `release`).
     */
    suspectCut: (provider: string) => `${prefix}:suspect-cut:${provider}`,
    /** The provider's last node events, newest first (a list of JSON suspect events, capped): what histories read. */
    suspectEvents: (provider: string) => `${prefix}:suspect-events:${provider}`,
    /** The provider's consumers by when their checks last ended, ms (a sorted set). */
    checked: (provider: string) => `${prefix}:checked:${provider}`,
    /** The provider's pause, a JSON pause (a string). */
    paused: (provider: string) => `${prefix}:paused:${provider}`,
    /** The one probe a paused provider lets through (a string with a TTL). */
    probe: (provider: string) => `${prefix}:probe:${provider}`,
    /** The provider's backend nodes as a worker last saw them, a JSON nodes note (a string with a TTL). */
    nodes: (provider: string) => `${prefix}:nodes:${provider}`,
    /** The provider's failed logins within a window, a JSON failed-logins note (a string with a TTL). */
    failedLogins: (provider: string) => `${prefix}:failed-logins:${provider}`,
    /** The provider's orphans, a JSON orphan report (a string). */
    orphans: (provider: string) => `${prefix}:orphans:${provider}`,
    /** The provider's held-back change a person confirmed (a string with a TTL). */
    confirmRemovals: (provider: string) => `${prefix}:confirm-removals:${provider}`,
    /** The provider's timeline: its consumers' losses, heals and brakes, a capped stream (see `timeline-event.ts`). */
    events: (provider: string) => `${prefix}:events:${provider}`,
    /**
     * The provider's consumers' last findings of a quiet heal, `t1 t2 t3` ms (a hash by consumer key; see
     * `contest-script.ts`).
     */
    findings: (provider: string) => `${prefix}:findings:${provider}`,
    /** The provider's consumers by their newest finding, ms (a sorted set): what the contested window forgets. */
    findingsAt: (provider: string) => `${prefix}:findings-at:${provider}`,
    /** The provider's contested consumers by when they stop being so, ms (a sorted set). */
    contested: (provider: string) => `${prefix}:contested:${provider}`,
    /** Why each contested consumer of the provider is, JSON `{since, n, last, at}` (a hash by consumer key). */
    contestedWhy: (provider: string) => `${prefix}:contested-why:${provider}`,
    /** The provider's last login found missing, `<at> <key>` (a string with a TTL): a loss wave's start. */
    lossWave: (provider: string) => `${prefix}:loss-wave:${provider}`,
    /**
     * Each consumer's routine wait by when it falls due, ms (a sorted set of consumer keys): what
     * the worker's rounds take; a wait taken is pushed to the end of its lease (see `src/schedule/due-waits.ts`).
     */
    due: `${prefix}:due`,
    /**
     * Each due wait's revision, the record's that scheduled it (a hash by consumer key). Stored under
     * its first name, so that the waits in the due set are kept across an upgrade.
     */
    dueRevs: `${prefix}:due-epochs`,
    /**
     * Each due wait as its job would carry it, without key and revision: JSON `{wait, ticket, seal}` (a hash by
     * consumer key).
     */
    dueWaits: `${prefix}:due-waits`,
    /** The sentinel whose absence says the queue's Redis forgot everything (a string). */
    alive: `${prefix}:alive`,
    /** The record store's outage as a worker last saw it, a JSON pause (a string with a TTL). */
    storeDown: `${prefix}:store-down`,
    /**
     * The queue's shard layout, `<shards> <generation>` (a string), read under the prefix as
     * configured only; absent: `1 0`, one shard as before shards existed (see `shard-layout.ts`).
     */
    layout: `${prefix}:layout`,
    /** The layout generation this shard's entries were written under (a string); absent: 0. */
    shardGeneration: `${prefix}:shard-generation`,
  };
}

export type CoordinationKeys = ReturnType<typeof coordinationKeys>;

/** Where a consumer of `provider` has an entry (besides its lock): what forgetting it clears. */
export function consumerEntries(keys: CoordinationKeys, provider: string) {
  return {
    hashes: [
      keys.revs,
      keys.memos,
      keys.states,
      keys.briefs,
      keys.dueRevs,
      keys.dueWaits,
      keys.findings(provider),
      keys.contestedWhy(provider),
    ],
    set: keys.couldNotAsk(provider),
    suspects: keys.suspects(provider),
    sortedSets: [keys.checked(provider), keys.due, keys.findingsAt(provider), keys.contested(provider)],
  };
}

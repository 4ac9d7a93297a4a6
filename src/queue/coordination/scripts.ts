/**
 * holdfast's Lua scripts, each beside the builder that turns named arguments into its KEYS
 * and ARGV (from the key table) and the reader of its reply: no caller orders a script's
 * arguments by hand. Keys come first and their count travels with each call, so no count is
 * kept apart from the list. Each opens with what it takes and returns, as BullMQ's do: its
 * KEYS, its ARGV (for a script over many entries, the `i`th entry's, from 1) and its reply.
 */
import { createHash } from 'node:crypto';
import type { QueueRedis } from '../bull-connection.js';
import { noteHeals } from './contest-script.js';
import type { CoordinationKeys } from './keys.js';

interface Script<A, R> {
  lua: string;
  /**
   * How many KEYS it takes, always: told to ioredis, which then routes (and auto-pipelines) it by
   * its first key on a cluster; 'varies' for a script over many consumers (the count goes with
   * each call).
   */
  keyCount: number | 'varies';
  build(keys: CoordinationKeys, args: A): { keys: string[]; argv: Array<string | number> };
  reply(raw: unknown): R;
}

/**
 * A script's arguments, its KEYS before its ARGV, with their count first (as ioredis takes them when a command has no
 * fixed count).
 */
export function scriptArgs<A>(
  script: Pick<Script<A, unknown>, 'build'>,
  keys: CoordinationKeys,
  args: A,
): Array<string | number> {
  const built = script.build(keys, args);
  return [built.keys.length, ...built.keys, ...built.argv];
}

const text = (raw: unknown): string | null => (typeof raw === 'string' ? raw : null);

/**
 * Lua a script over many consumers starts with: `over` runs one command on a key with a batch's arguments (at most
 * 4,000 at a time: Lua's `unpack` is bounded), so that a batch costs one command, not one per consumer (Redis counts
 * each command a script runs); its replies are joined.
 */
const OVER = `
local function over(command, key, args)
  local out = {}
  for i = 1, #args, 4000 do
    local reply = redis.call(command, key, unpack(args, i, math.min(i + 3999, #args)))
    if type(reply) == 'table' then for j = 1, #reply do out[#out + 1] = reply[j] end end
  end
  return out
end`;

/**
 * Lua for the locks (a hash, `keys.ts`): the queue's Redis clock in ms (one clock for every worker, as a key's TTL
 * was), and a lock value read as its end (ms) and its holder's token; nil for a value holdfast did not write (no lock).
 */
const LOCK = `
local function nowMs()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function lockOf(value)
  if not value then return nil end
  local untilMs, token = string.match(value, '^(%d+) (.+)$')
  if not untilMs then return nil end
  return tonumber(untilMs), token
end
local function lockValue(untilMs, token) return string.format('%d', untilMs) .. ' ' .. token end`;

/** A consumer's claim as {@link claim} replies it, undecoded. */
export interface ClaimReply {
  taken: boolean;
  rev: string | null;
  memo: string | null;
  removed: string | null;
}

/**
 * Takes each consumer's lock if free (no holder, or its time past by the queue's Redis clock; and
 * no lock of a release before locks were one hash: `keys.ts`); then its revision, check memo and
 * removal mark, as stored (undecoded): the mark is read with the claim, so no removal can come
 * between them. A consumer claimed twice in one call is taken once. Many consumers of one shard
 * in one call (the claims of one turn of the event loop: `locks.ts`), at a cost that does not
 * grow with them: seven commands, or three when none is free.
 *
 * KEYS[1]       locks (hash: consumer key → `<until, ms> <holder's token>`)
 * KEYS[2]       revisions (hash: consumer key → revision as last written)
 * KEYS[3]       check memos (hash: consumer key → memo, JSON)
 * KEYS[2 + 2i]  the `i`th consumer's lock as earlier releases kept it (string: its holder's token, PX)
 * KEYS[3 + 2i]  the `i`th consumer's removal mark (string: ms, PX)
 * ARGV[3i - 2]  the `i`th consumer's token
 * ARGV[3i - 1]  the `i`th consumer's key
 * ARGV[3i]      the `i`th consumer's lock time (ms)
 * Returns       four values per consumer, in order: 1, its revision, memo and mark (nil when
 *               absent) when its lock was taken; 0, nil, nil, nil when another holds it
 */
const claim: Script<{ claims: ReadonlyArray<{ key: string; token: string; ttlMs: number }> }, ClaimReply[]> = {
  keyCount: 'varies',
  lua: `${OVER}${LOCK}
local n = #ARGV / 3
local now = nowMs()
local fields, strings = {}, {}
for i = 1, n do
  fields[i] = ARGV[3 * i - 1]
  strings[i] = KEYS[2 + 2 * i]
  strings[n + i] = KEYS[3 + 2 * i]
end
local held = over('hmget', KEYS[1], fields)
local read = redis.call('mget', unpack(strings))
local taken, set, keys, at = {}, {}, {}, {}
for i = 1, n do
  local key, untilMs = fields[i], lockOf(held[i])
  if not read[i] and not taken[key] and (not untilMs or untilMs <= now) then
    taken[key] = true
    set[#set + 1] = key
    set[#set + 1] = lockValue(now + tonumber(ARGV[3 * i]), ARGV[3 * i - 2])
    keys[#keys + 1] = key
    at[i] = #keys
  end
end
local revs, memos = {}, {}
if #keys > 0 then
  over('hset', KEYS[1], set)
  revs = over('hmget', KEYS[2], keys)
  memos = over('hmget', KEYS[3], keys)
end
local out = {}
for i = 1, n do
  local j = at[i]
  if j then
    out[#out + 1] = 1
    out[#out + 1] = revs[j]
    out[#out + 1] = memos[j]
    out[#out + 1] = read[n + i]
  else
    out[#out + 1] = 0
    out[#out + 1] = false
    out[#out + 1] = false
    out[#out + 1] = false
  end
end
return out`,
  build: (k, a) => {
    const keys = [k.locks, k.revs, k.memos];
    const argv: Array<string | number> = [];
    for (const c of a.claims) {
      keys.push(k.lock(c.key), k.removed(c.key));
      argv.push(c.token, c.key, c.ttlMs);
    }
    return { keys, argv };
  },
  reply: (raw) => {
    const flat = Array.isArray(raw) ? (raw as unknown[]) : [];
    const out: ClaimReply[] = [];
    for (let i = 0; i + 3 < flat.length; i += 4)
      out.push({ taken: flat[i] === 1, rev: text(flat[i + 1]), memo: text(flat[i + 2]), removed: text(flat[i + 3]) });
    return out;
  },
};

/**
 * Marks the consumer removed at `at` (ms) for `ttlMs`, unless a later removal's mark is there
 * (a mark that is not a number is replaced).
 *
 * KEYS[1]  the consumer's removal mark (string: ms, PX)
 * ARGV[1]  when the removal was read (ms)
 * ARGV[2]  how long the mark is kept (ms)
 * Returns  1
 */
const markRemoved: Script<{ key: string; at: number; ttlMs: number }, void> = {
  keyCount: 1,
  lua: `
local old = tonumber(redis.call('get', KEYS[1]))
if not old or old < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`,
  build: (k, a) => ({ keys: [k.removed(a.key)], argv: [a.at, a.ttlMs] }),
  reply: () => undefined,
};

/**
 * Extends the lock while `token` holds it; false when its time is past (someone else may hold it).
 *
 * KEYS[1]  locks (hash: consumer key → `<until, ms> <holder's token>`)
 * ARGV[1]  the token
 * ARGV[2]  the consumer's key
 * ARGV[3]  the lock's new time (ms, from now)
 * Returns  1 when extended; 0 when the lock is gone, past or another's
 */
const extend: Script<{ key: string; token: string; ttlMs: number }, boolean> = {
  keyCount: 1,
  lua: `${LOCK}
local untilMs, token = lockOf(redis.call('hget', KEYS[1], ARGV[2]))
local now = nowMs()
if token ~= ARGV[1] or untilMs <= now then return 0 end
redis.call('hset', KEYS[1], ARGV[2], lockValue(now + tonumber(ARGV[3]), token))
return 1`,
  build: (k, a) => ({ keys: [k.locks], argv: [a.token, a.key, a.ttlMs] }),
  reply: (raw) => raw === 1,
};

/**
 * A consumer's release for {@link release}: `memo` encoded, `memoAt` when its check ended (ms), `askedAt` when its run
 * began asking (ms, the worker's clock, taken before its lock was claimed; null: not known).
 */
export interface ReleaseEntry {
  key: string;
  provider: string;
  token: string;
  memo: string | null;
  memoAt: number | null;
  asked: 'asked' | 'could-not-ask' | undefined;
  askedAt: number | null;
}

/** What {@link release} replies for each consumer. */
export interface ReleaseReply {
  /** How many consumers its provider's checked set holds once the call's are in. */
  count: number;
  /**
   * Still suspect: its check asked before the provider's last node event (or cannot say when), so it says nothing of
   * the node since; its routine wait, if in the due set, was brought forward to when the check ended.
   */
  suspect: boolean;
}

/**
 * Releases each lock (if still its `token`'s); keeps the check memo and when the check ended in
 * the provider's sorted set; `asked` moves the consumer in or out of the provider's could-not-ask
 * set (the last said of a consumer wins). A consumer `asked` is no longer suspect (one SREM per provider's suspect set)
 * when its run began asking at or after the provider's last node event was seen (its suspect cut, read once per
 * provider and call, only when one of its consumers was asked): a check under way as the node restarted asked the node
 * that was, so its consumer stays suspect and its routine wait is brought forward, to be asked again at once (a
 * wait that is not routine, a brake or a retry, is left alone, as `suspectWaits` leaves it). Replies, for each, how
 * many consumers its provider's sorted set holds once the call's are in (its consumers asked about): what sets the
 * pace of its deep checks, learned without another round trip; and whether it is still suspect. Many consumers of one
 * shard in one call (`locks.ts`), at a cost that does not grow with them: one command per lock hash, memo hash and set
 * touched, two per provider's sorted set, one per provider asked about (its cut), and, when checks asked before their
 * provider's cut (a node event under way), one SISMEMBER each, one HMGET and one ZADD. Each provider's keys are sent once per call, not once per consumer (a routine check's
 * release was most of the bytes it sent the queue's Redis).
 *
 * KEYS[1]       locks (hash: consumer key → `<until, ms> <holder's token>`)
 * KEYS[2]       check memos (hash: consumer key → memo, JSON)
 * KEYS[3]       due (sorted set: consumer key → when its wait falls due, ms)
 * KEYS[4]       due waits (hash: consumer key → its wait's data, JSON)
 * KEYS[4p + 1]  the `p`th provider's could-not-ask set (set of consumer keys)
 * KEYS[4p + 2]  its checked set (sorted set: consumer key → when its check ended, ms)
 * KEYS[4p + 3]  its suspect set (set of consumer keys)
 * KEYS[4p + 4]  its suspect cut (string: when its last node event was seen, ms)
 * ARGV[7i - 6]  the `i`th consumer's token
 * ARGV[7i - 5]  the `i`th consumer's key
 * ARGV[7i - 4]  its memo, JSON ('' for none: the memo kept is left alone)
 * ARGV[7i - 3]  'asked', 'could-not-ask', or '' for neither
 * ARGV[7i - 2]  when its check ended (ms; '' for none)
 * ARGV[7i - 1]  when its run began asking (ms; '' when not known: then it stays suspect)
 * ARGV[7i]      its provider's `p`
 * Returns       two values per consumer: how many consumers its provider's checked set holds, and 1 when it is still
 *               suspect (else 0)
 */
const release: Script<{ releases: readonly ReleaseEntry[] }, ReleaseReply[]> = {
  keyCount: 'varies',
  lua: `${OVER}${LOCK}
local n = #ARGV / 7
local fields, sortedOf = {}, {}
for i = 1, n do fields[i] = ARGV[7 * i - 5] end
local held = over('hmget', KEYS[1], fields)
local free, memos, sets, setsSeen, checked, checkedSeen, suspects, suspectsSeen = {}, {}, {}, {}, {}, {}, {}, {}
local cuts, late = {}, {}
for i = 1, n do
  local token, key, memo, asked, at = ARGV[7 * i - 6], fields[i], ARGV[7 * i - 4], ARGV[7 * i - 3], ARGV[7 * i - 2]
  local p = tonumber(ARGV[7 * i])
  local couldNotAsk, sorted, suspect = KEYS[4 * p + 1], KEYS[4 * p + 2], KEYS[4 * p + 3]
  sortedOf[i] = sorted
  local _, holder = lockOf(held[i])
  if holder == token then free[#free + 1] = key end
  if memo ~= '' then
    memos[#memos + 1] = key
    memos[#memos + 1] = memo
  end
  if asked ~= '' then
    if not sets[couldNotAsk] then
      sets[couldNotAsk] = {}
      setsSeen[#setsSeen + 1] = couldNotAsk
    end
    sets[couldNotAsk][key] = asked == 'could-not-ask'
  end
  if asked == 'asked' then
    if cuts[p] == nil then cuts[p] = tonumber(redis.call('get', KEYS[4 * p + 4])) or -1 end
    local askedAt = tonumber(ARGV[7 * i - 1])
    if askedAt and askedAt >= cuts[p] then
      if not suspects[suspect] then
        suspects[suspect] = {}
        suspectsSeen[#suspectsSeen + 1] = suspect
      end
      suspects[suspect][#suspects[suspect] + 1] = key
    else
      late[#late + 1] = i
    end
  end
  if not checked[sorted] then
    checked[sorted] = {}
    checkedSeen[#checkedSeen + 1] = sorted
  end
  if at ~= '' then
    checked[sorted][#checked[sorted] + 1] = at
    checked[sorted][#checked[sorted] + 1] = key
  end
end
if #free > 0 then over('hdel', KEYS[1], free) end
if #memos > 0 then over('hset', KEYS[2], memos) end
for _, set in ipairs(setsSeen) do
  local add, remove = {}, {}
  for key, couldNotAsk in pairs(sets[set]) do
    if couldNotAsk then add[#add + 1] = key else remove[#remove + 1] = key end
  end
  if #add > 0 then over('sadd', set, add) end
  if #remove > 0 then over('srem', set, remove) end
end
for _, suspect in ipairs(suspectsSeen) do over('srem', suspect, suspects[suspect]) end
local still = {}
if #late > 0 then
  local lateKeys = {}
  for j, i in ipairs(late) do lateKeys[j] = fields[i] end
  local waits, forward = over('hmget', KEYS[4], lateKeys), {}
  for j, i in ipairs(late) do
    if redis.call('sismember', KEYS[4 * tonumber(ARGV[7 * i]) + 3], fields[i]) == 1 then
      still[i] = true
      local wait = waits[j]
      if wait and string.sub(wait, 1, 16) == '{"wait":"verify"' then
        local at = ARGV[7 * i - 2]
        forward[#forward + 1] = at ~= '' and at or nowMs()
        forward[#forward + 1] = fields[i]
      end
    end
  end
  if #forward > 0 then redis.call('zadd', KEYS[3], 'XX', 'LT', unpack(forward)) end
end
local counts = {}
for _, sorted in ipairs(checkedSeen) do
  if #checked[sorted] > 0 then over('zadd', sorted, checked[sorted]) end
  counts[sorted] = redis.call('zcard', sorted)
end
local out = {}
for i = 1, n do
  out[2 * i - 1] = counts[sortedOf[i]]
  out[2 * i] = still[i] and 1 or 0
end
return out`,
  build: (k, a) => {
    const keys = [k.locks, k.memos, k.due, k.dueWaits];
    const argv: Array<string | number> = [];
    const providers = new Map<string, number>();
    for (const r of a.releases) {
      let p = providers.get(r.provider);
      if (p === undefined) {
        providers.set(r.provider, (p = providers.size + 1));
        keys.push(k.couldNotAsk(r.provider), k.checked(r.provider), k.suspects(r.provider), k.suspectCut(r.provider));
      }
      const askedAt = r.askedAt === null ? '' : String(r.askedAt);
      argv.push(r.token, r.key, r.memo ?? '', r.asked ?? '', r.memoAt === null ? '' : String(r.memoAt), askedAt, p);
    }
    return { keys, argv };
  },
  reply: (raw) => {
    const flat = Array.isArray(raw) ? (raw as unknown[]) : [];
    const out: ReleaseReply[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const count = flat[i];
      out.push({ count: typeof count === 'number' ? count : 0, suspect: flat[i + 1] === 1 });
    }
    return out;
  },
};

/** One consumer's brief for {@link noteBriefs}: `state` is `<state token> <rev>`; `heldSince` when it is held. */
export interface NotedBrief {
  key: string;
  rev: number;
  state: string;
  brief: string;
  heldSince: number | null;
}

/**
 * Notes each consumer's state and brief unless a newer revision is noted (entries judged in
 * order); a consumer held since `heldSince` counts as asked then, unless it was asked later. One
 * provider per call, at a cost that grows only by one command per consumer held (its asked-at
 * time read: `ZADD GT` would need Redis 6.2, BullMQ asks for 5).
 *
 * KEYS[1]       states (hash: consumer key → `<state token> <revision>`)
 * KEYS[2]       briefs (hash: consumer key → its record in brief)
 * KEYS[3]       the provider's checked set (sorted set: consumer key → when it was last asked, ms)
 * ARGV[5i - 4]  the `i`th consumer's key
 * ARGV[5i - 3]  its revision
 * ARGV[5i - 2]  its state, `<state token> <revision>`, sealed (`../note-seal.ts`: the seal follows)
 * ARGV[5i - 1]  its brief
 * ARGV[5i]      since when it is held (ms; '' when it is not)
 * Returns       1
 */
const noteBriefs: Script<{ provider: string; entries: readonly NotedBrief[] }, void> = {
  keyCount: 3,
  lua: `${OVER}
local keys = {}
for i = 1, #ARGV, 5 do keys[#keys + 1] = ARGV[i] end
local olds = over('hmget', KEYS[1], keys)
local seen, asked, states, briefs, held = {}, {}, {}, {}, {}
for j = 1, #keys do
  local key, rev, since = keys[j], tonumber(ARGV[5 * j - 3]), ARGV[5 * j]
  local old = seen[key] or (olds[j] and tonumber(string.match(olds[j], '^%S+ (%d+)')))
  if not old or old <= rev then
    seen[key] = rev
    states[#states + 1] = key
    states[#states + 1] = ARGV[5 * j - 2]
    briefs[#briefs + 1] = key
    briefs[#briefs + 1] = ARGV[5 * j - 1]
    if since ~= '' then
      if asked[key] == nil then
        asked[key] = tonumber(redis.call('zscore', KEYS[3], key)) or false
      end
      if not asked[key] or asked[key] < tonumber(since) then
        asked[key] = tonumber(since)
        held[#held + 1] = since
        held[#held + 1] = key
      end
    end
  end
end
if #states > 0 then
  over('hset', KEYS[1], states)
  over('hset', KEYS[2], briefs)
end
if #held > 0 then over('zadd', KEYS[3], held) end
return 1`,
  build: (k, a) => ({
    keys: [k.states, k.briefs, k.checked(a.provider)],
    argv: a.entries.flatMap((e) => [e.key, e.rev, e.state, e.brief, e.heldSince ?? '']),
  }),
  reply: () => undefined,
};

/**
 * Notes when the provider's node event was seen as its suspect cut, unless a later one is there (a loss wave's start
 * may come before the event it follows): noted before any consumer is made suspect, so that no check under way then is
 * released as if it had asked the node since.
 *
 * KEYS[1]  the provider's suspect cut (string: ms)
 * ARGV[1]  when the event was seen (ms)
 * Returns  1
 */
const noteSuspectCut: Script<{ provider: string; at: number }, void> = {
  keyCount: 1,
  lua: `
local old = tonumber(redis.call('get', KEYS[1]))
if not old or old < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]) end
return 1`,
  build: (k, a) => ({ keys: [k.suspectCut(a.provider)], argv: [a.at] }),
  reply: () => undefined,
};

/**
 * The provider's could-not-ask consumers, the set emptied as it is read.
 *
 * KEYS[1]  the provider's could-not-ask set (set of consumer keys)
 * Returns  its members
 */
const takeCouldNotAsk: Script<{ provider: string }, string[]> = {
  keyCount: 1,
  lua: `
local members = redis.call('smembers', KEYS[1])
redis.call('del', KEYS[1])
return members`,
  build: (k, a) => ({ keys: [k.couldNotAsk(a.provider)], argv: [] }),
  reply: (raw) => (Array.isArray(raw) ? raw.filter((m): m is string => typeof m === 'string') : []),
};

/**
 * Notes on the provider's last node event when all the consumers it made suspect were asked, unless noted already: at
 * most one caller notes each event (several workers watch it drain), and an event noted meanwhile by another worker's
 * `markSuspects` is not overwritten by the one read before it.
 *
 * KEYS[1]     the provider's last node event (JSON)
 * ARGV[1]     when all were asked (ISO)
 * Returns     the event as noted by this call (JSON, with `asked`), or false when absent, not JSON or noted already
 */
const noteSuspectsAsked: Script<{ provider: string; asked: string }, string | null> = {
  keyCount: 1,
  lua: `
local raw = redis.call('get', KEYS[1])
if not raw then return false end
local ok, event = pcall(cjson.decode, raw)
if not ok or type(event) ~= 'table' or event.asked ~= nil then return false end
event.asked = ARGV[1]
local text = cjson.encode(event)
redis.call('set', KEYS[1], text)
return text`,
  build: (k, a) => ({ keys: [k.suspectEvent(a.provider)], argv: [a.asked] }),
  reply: (raw) => (typeof raw === 'string' ? raw : null),
};

/**
 * Makes a batch of the provider's consumers suspect and asks them now: each one whose routine wait (`verify`) is in
 * the due set has that wait brought forward to `now` (never later than it was), for the ordinary rounds to check it on
 * its ticket, and joins the suspect set. A consumer already suspect is asked again too, unless its asking is under way
 * (its wait is due already, brought forward and not taken yet, or it is locked: being checked now): a flapping node does
 * not start twice what is under way, and an earlier event's suspect left waiting (its check could not ask a node that
 * was down) is asked at this event, not at the stragglers' re-ask. A consumer with no routine wait (being applied,
 * braked, retried) is left alone: asked by its own wait. One SMISMEMBER, ZMSCORE, two HMGET, one ZADD and SADD per
 * batch.
 *
 * `again`: the consumers are suspect already and not asked since a while (a straggler, its check could not ask):
 * their waits are brought forward once more, whether suspect or not.
 *
 * KEYS[1]     the provider's suspect set (set of consumer keys)
 * KEYS[2]     due (sorted set: consumer key → when its wait falls due, ms)
 * KEYS[3]     due waits (hash: consumer key → its wait's data, JSON)
 * KEYS[4]     locks (hash: consumer key → `<until, ms> <holder's token>`): a consumer locked now is being checked; it is
 *             made suspect but its wait is left alone (taken again, it would only find its consumer busy)
 * ARGV[1]     now (ms)
 * ARGV[2]     '1' to ask again those suspect already, else ''
 * ARGV[3..]   the consumers
 * Returns     the consumers made suspect (or asked again) by this call
 */
const suspectWaits: Script<{ provider: string; now: number; again?: boolean; keys: readonly string[] }, string[]> = {
  keyCount: 4,
  lua: `
local keys = {}
for i = 3, #ARGV do keys[#keys + 1] = ARGV[i] end
if #keys == 0 then return {} end
local now, again = tonumber(ARGV[1]), ARGV[2] == '1'
local already = redis.call('smismember', KEYS[1], unpack(keys))
local dueAt = redis.call('zmscore', KEYS[2], unpack(keys))
local waits = redis.call('hmget', KEYS[3], unpack(keys))
local locks = redis.call('hmget', KEYS[4], unpack(keys))
local fresh, forward = {}, {}
for j = 1, #keys do
  local wait = waits[j]
  local lockedUntil = tonumber(string.match(locks[j] or '', '^(%d+) '))
  local locked = lockedUntil ~= nil and lockedUntil > now
  local due = tonumber(dueAt[j])
  local underWay = locked or (due ~= nil and due <= now)
  if (again or already[j] == 0 or not underWay) and wait and string.sub(wait, 1, 16) == '{"wait":"verify"' then
    fresh[#fresh + 1] = keys[j]
    if not locked then
      forward[#forward + 1] = ARGV[1]
      forward[#forward + 1] = keys[j]
    end
  end
end
if #forward > 0 then redis.call('zadd', KEYS[2], 'XX', 'LT', unpack(forward)) end
if #fresh > 0 then redis.call('sadd', KEYS[1], unpack(fresh)) end
return fresh`,
  build: (k, a) => ({
    keys: [k.suspects(a.provider), k.due, k.dueWaits, k.locks],
    argv: [a.now, a.again ? '1' : '', ...a.keys],
  }),
  reply: (raw) => (Array.isArray(raw) ? raw.filter((m): m is string => typeof m === 'string') : []),
};

/** A wait to schedule in the due set: when it falls due (ms) and its job's data as text. */
export interface DueEntry {
  key: string;
  rev: number;
  dueAt: number;
  text: string;
}

/**
 * Schedules each wait unless one of the same or a later revision is there (the same wait, or one
 * that replaced it); one whose revision is past the consumer's as last written (no
 * record had it: written by hand) is replaced too. A wait of the same revision keeps its due time
 * and gets this data (the same, unless written by hand). Entries are judged in order (a consumer's
 * second entry against its first), at a cost that does not grow with them: six commands at most.
 *
 * KEYS[1]       due (sorted set: consumer key → when its wait falls due, ms)
 * KEYS[2]       due revisions (hash: consumer key → the revision of its wait)
 * KEYS[3]       due waits (hash: consumer key → its wait's data, JSON `{wait, ticket, seal}`)
 * KEYS[4]       revisions (hash: consumer key → revision as last written)
 * ARGV[4i - 3]  the `i`th wait's consumer key
 * ARGV[4i - 2]  its revision
 * ARGV[4i - 1]  when it falls due (ms)
 * ARGV[4i]      its data, JSON
 * Returns       per wait, 1 when it was scheduled, else 0 (data rewritten at the same revision is not)
 */
const scheduleDue: Script<{ entries: readonly DueEntry[] }, number[]> = {
  keyCount: 4,
  lua: `${OVER}
local keys = {}
for i = 1, #ARGV, 4 do keys[#keys + 1] = ARGV[i] end
local olds, knowns = over('hmget', KEYS[2], keys), over('hmget', KEYS[4], keys)
local seen, revs, data, due, out = {}, {}, {}, {}, {}
for j = 1, #keys do
  local key, rev = keys[j], tonumber(ARGV[4 * j - 2])
  local old, known = seen[key] or tonumber(olds[j]), tonumber(knowns[j])
  out[j] = 0
  if not old or old < rev or (known and old > known) then
    seen[key] = rev
    revs[#revs + 1] = key
    revs[#revs + 1] = ARGV[4 * j - 2]
    due[#due + 1] = ARGV[4 * j - 1]
    due[#due + 1] = key
    out[j] = 1
  end
  if out[j] == 1 or old == rev then
    data[#data + 1] = key
    data[#data + 1] = ARGV[4 * j]
  end
end
if #revs > 0 then
  over('hset', KEYS[2], revs)
  over('zadd', KEYS[1], due)
end
if #data > 0 then over('hset', KEYS[3], data) end
return out`,
  build: (k, a) => ({
    keys: [k.due, k.dueRevs, k.dueWaits, k.revs],
    argv: a.entries.flatMap((e) => [e.key, e.rev, e.dueAt, e.text]),
  }),
  reply: (raw) => (Array.isArray(raw) ? (raw as unknown[]).map((n) => (n === 1 ? 1 : 0)) : []),
};

/**
 * A wait the due set gave a round: its key, revision and data as stored (either may be unreadable), and when it fell
 * due (ms).
 */
export interface TakenEntry {
  key: string;
  rev: string;
  text: string;
  dueAt: number;
}

/**
 * Takes up to `limit` waits due by `now`, each pushed to `leaseUntil` (taken again then, unless
 * settled before); replies them, and when the next wait falls due (ms; null: none left). The
 * first `limit + 1` waits are read at once: those due are taken, and the first left (or the
 * lease's end, if sooner) is the next. Five commands, however many are taken.
 *
 * KEYS[1]  due (sorted set: consumer key → when its wait falls due, ms)
 * KEYS[2]  due revisions (hash: consumer key → the revision of its wait)
 * KEYS[3]  due waits (hash: consumer key → its wait's data, JSON)
 * ARGV[1]  now (ms): waits due by then are taken
 * ARGV[2]  the lease's end (ms): each taken wait's new due time
 * ARGV[3]  how many to take at most
 * Returns  the first due time left once these are leased ('' when none), then four values per
 *          wait taken: its consumer key, revision ('' when absent), data ('' when absent) and
 *          the due time it was taken at (ms)
 */
const takeDue: Script<
  { now: number; leaseUntil: number; limit: number },
  { taken: TakenEntry[]; nextAt: number | null }
> = {
  keyCount: 3,
  lua: `${OVER}
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[3])
local head = redis.call('zrange', KEYS[1], 0, limit, 'WITHSCORES')
local keys, lease, i = {}, {}, 1
while i < #head and #keys < limit and tonumber(head[i + 1]) <= now do
  keys[#keys + 1] = head[i]
  lease[#lease + 1] = ARGV[2]
  lease[#lease + 1] = head[i]
  i = i + 2
end
local nextAt = head[i + 1]
local out = {}
if #keys > 0 then
  over('zadd', KEYS[1], lease)
  local revs, waits = over('hmget', KEYS[2], keys), over('hmget', KEYS[3], keys)
  if not nextAt or tonumber(ARGV[2]) < tonumber(nextAt) then nextAt = ARGV[2] end
  for j = 1, #keys do
    out[#out + 1] = keys[j]
    out[#out + 1] = revs[j] or ''
    out[#out + 1] = waits[j] or ''
    out[#out + 1] = head[2 * j]
  end
end
table.insert(out, 1, nextAt or '')
return out`,
  build: (k, a) => ({ keys: [k.due, k.dueRevs, k.dueWaits], argv: [a.now, a.leaseUntil, a.limit] }),
  reply: (raw) => {
    const [next, ...flat] = Array.isArray(raw) ? (raw as unknown[]).map((v) => (typeof v === 'string' ? v : '')) : [''];
    const taken: TakenEntry[] = [];
    for (let i = 0; i + 3 < flat.length; i += 4)
      taken.push({ key: flat[i]!, rev: flat[i + 1]!, text: flat[i + 2]!, dueAt: Number(flat[i + 3]) });
    return { taken, nextAt: next ? Number(next) : null };
  },
};

/** What became of a wait a round took: due again `at` (ms), or gone (`at` null). */
export interface SettledEntry {
  key: string;
  rev: string;
  at: number | null;
}

/**
 * Settles taken waits, each only while its revision is still the one taken (a newer wait replaced
 * it otherwise): due again, or removed (a wait settled twice in one call both ways is removed).
 * At most five commands, however many are settled.
 *
 * KEYS[1]       due (sorted set: consumer key → when its wait falls due, ms)
 * KEYS[2]       due revisions (hash: consumer key → the revision of its wait)
 * KEYS[3]       due waits (hash: consumer key → its wait's data, JSON)
 * ARGV[3i - 2]  the `i`th wait's consumer key
 * ARGV[3i - 1]  its revision as taken
 * ARGV[3i]      when it falls due again (ms; '' when it is done with: removed)
 * Returns       1
 */
const settleDue: Script<{ settled: readonly SettledEntry[] }, void> = {
  keyCount: 3,
  lua: `${OVER}
local keys = {}
for i = 1, #ARGV, 3 do keys[#keys + 1] = ARGV[i] end
local revs = over('hmget', KEYS[2], keys)
local again, gone = {}, {}
for j = 1, #keys do
  if revs[j] == ARGV[3 * j - 1] then
    if ARGV[3 * j] == '' then
      gone[#gone + 1] = keys[j]
    else
      again[#again + 1] = ARGV[3 * j]
      again[#again + 1] = keys[j]
    end
  end
end
if #again > 0 then over('zadd', KEYS[1], again) end
if #gone > 0 then
  over('zrem', KEYS[1], gone)
  over('hdel', KEYS[2], gone)
  over('hdel', KEYS[3], gone)
end
return 1`,
  build: (k, a) => ({
    keys: [k.due, k.dueRevs, k.dueWaits],
    argv: a.settled.flatMap((e) => [e.key, e.rev, e.at === null ? '' : e.at]),
  }),
  reply: () => undefined,
};

/** The script table: each one's name in Redis is `hf` and its key here. */
export const SCRIPTS = {
  claim,
  markRemoved,
  extend,
  release,
  noteBriefs,
  takeCouldNotAsk,
  suspectWaits,
  noteSuspectCut,
  noteSuspectsAsked,
  scheduleDue,
  takeDue,
  settleDue,
  noteHeals,
};

type Scripts = typeof SCRIPTS;
type ArgsOf<N extends keyof Scripts> = Parameters<Scripts[N]['build']>[1];
type ReplyOf<N extends keyof Scripts> = ReturnType<Scripts[N]['reply']>;

/** Runs the script table's scripts on one connection, under one key table. */
export class ScriptRunner {
  constructor(
    private readonly redis: QueueRedis,
    private readonly keys: CoordinationKeys,
  ) {
    for (const [name, script] of Object.entries(SCRIPTS))
      if (script.keyCount !== 'varies')
        redis.defineCommand(commandName(name), { lua: script.lua, numberOfKeys: script.keyCount });
  }

  async run<N extends keyof Scripts>(name: N, args: ArgsOf<N>): Promise<ReplyOf<N>> {
    const script = SCRIPTS[name] as Script<ArgsOf<N>, ReplyOf<N>>;
    const sent = scriptArgs(script, this.keys, args);
    // a script over many consumers is sent by its digest, as EVALSHA (its text, as EVAL, only when
    // the server does not know it yet): ioredis routes (and auto-pipelines) a command it knows by its
    // first key, and a defined command by its first argument, the count
    if (script.keyCount === 'varies') return script.reply(await this.evalBatch(script.lua, sent));
    const command = (this.redis as unknown as Record<string, (...argv: Array<string | number>) => Promise<unknown>>)[
      commandName(name)
    ]!;
    // a fixed count is the command's own (`keyCount`): what is sent then starts with the first key
    return script.reply(await command.apply(this.redis, sent.slice(1)));
  }

  /**
   * `lua` run on `sent` (the key count first) by its SHA-1 digest; by its text when the server answers that it does
   * not know it (`NOSCRIPT`: a new server, a restart, `SCRIPT FLUSH`), which loads it for the next calls.
   */
  private async evalBatch(lua: string, sent: Array<string | number>): Promise<unknown> {
    const [count, ...rest] = sent as [number, ...Array<string | number>];
    try {
      return await this.redis.evalsha(digestOf(lua), count, ...rest);
    } catch (error) {
      if (replyCode(error) !== 'NOSCRIPT') throw error;
      return this.redis.eval(lua, count, ...rest);
    }
  }
}

const digests = new Map<string, string>();

/** A script's SHA-1 digest, as Redis names it (computed once per script). */
function digestOf(lua: string): string {
  let digest = digests.get(lua);
  if (digest === undefined) digests.set(lua, (digest = createHash('sha1').update(lua).digest('hex')));
  return digest;
}

/** The error code a Redis error reply starts with (`NOSCRIPT`…); undefined for other errors. */
function replyCode(error: unknown): string | undefined {
  return error instanceof Error && error.name === 'ReplyError' ? error.message.split(' ', 1)[0] : undefined;
}

function commandName(name: string): string {
  return `hf${name[0]!.toUpperCase()}${name.slice(1)}`;
}

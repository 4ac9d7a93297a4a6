/**
 * The script that notes the quiet heals of one turn of the event loop on one provider (and queue
 * shard), all in one slot: each heal's timeline events added to the provider's timeline, and its
 * finding counted (the rule: `../contest.ts`). One call for the turn's heals, not one per heal:
 * what each call does once (forgetting what the window left behind, the keys' expiry, the loss
 * wave read and set) is shared by the heals of the turn. The keys:
 *
 * - `events`: the provider's timeline, a capped stream (`XADD … MAXLEN ~`, as `notes.ts` adds);
 * - `findings`: a hash, consumer key → the times of its last findings (`t1 t2 t3`, ms, newest last);
 * - `findings-at`: a sorted set, consumer key → its newest finding: what the window forgets, the
 *   cap's order;
 * - `contested`: a sorted set, consumer key → when it stops being contested (ms);
 * - `contested-why`: a hash, consumer key → `{since, n, last, at, w}` (JSON; `w`: the window);
 * - `loss-wave`: `<at> <key>`, the last login found missing, kept the wave's span (a string, PX);
 *   `<at> ` once a wave is seen (nothing left to take back).
 *
 * Each call forgets up to 100 findings older than the window of its earliest finding and
 * contests that ended by then (those of later findings are judged by their times, as they were),
 * keeps each set within the cap (the oldest go), and keeps the four keys twice the window past
 * the provider's last finding counted (one in a loss wave, not counted, does not keep them).
 * Heals are counted in the order given, as one call each would.
 */
import type { FindingOutcome } from '../contest.js';
import type { CoordinationKeys } from './keys.js';

/** One heal's note as the script takes it: its timeline events (JSON) and its finding, if it has one. */
export interface HealNoteArgs {
  events: readonly string[];
  finding?: {
    key: string;
    now: number;
    windowMs: number;
    needed: number;
    lossWave: boolean;
    words: string;
    waveMs: number;
    cap: number;
  };
}

/** The script's arguments: one provider's heals of a turn, and its timeline's cap. */
export interface HealNotesArgs {
  provider: string;
  timelineCap: number;
  heals: readonly HealNoteArgs[];
}

/** ARGV fields of a heal before its events. */
const HEAD = 9;

/**
 * Notes each heal (see the file's comment).
 *
 * KEYS[1]  the provider's timeline (stream)
 * KEYS[2]  the provider's findings (hash: consumer key → `t1 t2 t3`, ms, newest last)
 * KEYS[3]  the provider's findings-at (sorted set: consumer key → its newest finding, ms)
 * KEYS[4]  the provider's contested (sorted set: consumer key → when its contest ends, ms)
 * KEYS[5]  the provider's contested-why (hash: consumer key → `{since, n, last, at, w}`, JSON)
 * KEYS[6]  the provider's loss wave (string: `<at> <key>`, or `<at> ` once a wave is seen; PX)
 * ARGV[1]  the timeline's cap
 * then per heal, in order: its consumer's key ('' when it has no finding), now (ms: the finding's
 * time), the window (ms), how many findings within the window make it contested, '1' when the
 * finding may be part of a loss wave, the finding in words (kept as `last`), a loss wave's span
 * (ms), the cap of each set, the number of its events; then its events (JSON)
 * Returns  three values per heal, in order: {0, 0, 0} for a heal without a finding or one part of a
 *          loss wave (not counted, and the wave's first one taken back); {0, 1, <the wave's first
 *          finding, ms>} for the one that shows the wave; else {state, findings, 0}: state 1 counted,
 *          2 became contested, 3 still contested; findings: those in the window (at most its need),
 *          or, still contested, the contest's count with this one
 */
const LUA = `
local heals, i = {}, 2
while i <= #ARGV do
  local n = tonumber(ARGV[i + ${HEAD - 1}])
  heals[#heals + 1] = { at = i, n = n }
  i = i + ${HEAD} + n
end
local function forget(set, hash, keys)
  for _, k in ipairs(keys) do
    redis.call('zrem', set, k)
    redis.call('hdel', hash, k)
  end
end
local earliest, latestWindow
for _, h in ipairs(heals) do
  if ARGV[h.at] ~= '' then
    local now, window = tonumber(ARGV[h.at + 1]), tonumber(ARGV[h.at + 2])
    if not earliest or now - window < earliest.old then earliest = { old = now - window, now = now } end
  end
end
if earliest then
  forget(KEYS[3], KEYS[2], redis.call('zrangebyscore', KEYS[3], '-inf', earliest.old, 'LIMIT', 0, 100))
  forget(KEYS[4], KEYS[5], redis.call('zrangebyscore', KEYS[4], '-inf', earliest.now, 'LIMIT', 0, 100))
end
local wave, waveRead, waveSet, waveMsSet = nil, false, false, 0
local function waveNow()
  if not waveRead then
    wave = redis.call('get', KEYS[6])
    waveRead = true
  end
  return wave
end
local function count(at)
  local key, now, window, need = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  local wavy, words, waveMs, cap = ARGV[at + 4] == '1', ARGV[at + 5], tonumber(ARGV[at + 6]), tonumber(ARGV[at + 7])
  local function times(k)
    local out = {}
    for t in string.gmatch(redis.call('hget', KEYS[2], k) or '', '%d+') do
      if tonumber(t) > now - window then out[#out + 1] = tonumber(t) end
    end
    return out
  end
  if wavy then
    local seen, first = string.match(waveNow() or '', '^(%d+) (.*)$')
    waveSet, waveMsSet = true, waveMs
    if seen and first ~= key then
      if first ~= '' then
        local kept = {}
        for _, t in ipairs(times(first)) do if t ~= tonumber(seen) then kept[#kept + 1] = t end end
        if #kept == 0 then forget(KEYS[3], KEYS[2], {first}) else redis.call('hset', KEYS[2], first, table.concat(kept, ' ')) end
        local why = redis.call('hget', KEYS[5], first)
        if why and cjson.decode(why).since == tonumber(seen) then forget(KEYS[4], KEYS[5], {first}) end
      end
      wave = seen .. ' '
      if first ~= '' then return 0, 1, tonumber(seen) end
      return 0, 0, 0
    end
    wave = now .. ' ' .. key
  end
  if not latestWindow or window > latestWindow then latestWindow = window end
  local list = times(key)
  list[#list + 1] = now
  while #list > need do table.remove(list, 1) end
  redis.call('hset', KEYS[2], key, table.concat(list, ' '))
  redis.call('zadd', KEYS[3], now, key)
  local function capped(set, hash)
    if redis.call('zcard', set) > cap then forget(set, hash, redis.call('zrange', set, 0, 0)) end
  end
  capped(KEYS[3], KEYS[2])
  local until_ = tonumber(redis.call('zscore', KEYS[4], key))
  local was = until_ ~= nil and until_ > now
  local state, n = 1, #list
  if was or n >= need then
    local since = now
    if was then
      local why = cjson.decode(redis.call('hget', KEYS[5], key) or '{}')
      since, n, state = why.since or now, (why.n or need) + 1, 3
    else
      state = 2
    end
    redis.call('zadd', KEYS[4], now + window, key)
    redis.call('hset', KEYS[5], key, cjson.encode({since = since, n = n, last = words, at = now, w = window}))
    capped(KEYS[4], KEYS[5])
  end
  return state, n, 0
end
local out = {}
for _, h in ipairs(heals) do
  for j = 1, h.n do redis.call('xadd', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[h.at + ${HEAD - 1} + j]) end
  local state, n, since = 0, 0, 0
  if ARGV[h.at] ~= '' then state, n, since = count(h.at) end
  out[#out + 1] = state
  out[#out + 1] = n
  out[#out + 1] = since
end
if waveSet then redis.call('set', KEYS[6], wave, 'PX', waveMsSet) end
if latestWindow then for k = 2, 5 do redis.call('pexpire', KEYS[k], 2 * latestWindow) end end
return out`;

/** A heal's ARGV fields (see {@link LUA}). */
function healArgv({ events, finding: f }: HealNoteArgs): Array<string | number> {
  const head = f
    ? [f.key, f.now, f.windowMs, f.needed, f.lossWave ? '1' : '', f.words, f.waveMs, f.cap]
    : ['', '', '', '', '', '', '', ''];
  return [...head, events.length, ...events];
}

/** What the script replied (`flat`) of each of `heals`: the outcome of its finding, undefined for one without. */
export function healOutcomes(
  flat: readonly number[],
  heals: readonly HealNoteArgs[],
): Array<FindingOutcome | undefined> {
  return heals.map((heal, i): FindingOutcome | undefined => {
    if (!heal.finding) return undefined;
    const [state, n, since] = [flat[3 * i] ?? 0, flat[3 * i + 1] ?? 0, flat[3 * i + 2] ?? 0];
    if (!state) return n === 1 ? { counted: false, waveBegan: true, waveSince: since } : { counted: false };
    return { counted: true, findings: n, contested: state >= 2, became: state === 2 };
  });
}

/** {@link LUA} with its builder and reader, for the script table (`scripts.ts`). */
export const noteHeals = {
  keyCount: 6,
  lua: LUA,
  build: (k: CoordinationKeys, a: HealNotesArgs) => ({
    keys: [
      k.events(a.provider),
      k.findings(a.provider),
      k.findingsAt(a.provider),
      k.contested(a.provider),
      k.contestedWhy(a.provider),
      k.lossWave(a.provider),
    ],
    argv: [a.timelineCap, ...a.heals.flatMap(healArgv)],
  }),
  /** Three numbers per heal, read by {@link healOutcomes}. */
  reply: (raw: unknown): number[] => (Array.isArray(raw) ? (raw as unknown[]).map(Number) : []),
};

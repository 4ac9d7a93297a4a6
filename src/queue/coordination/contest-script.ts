/**
 * The script that counts a quiet heal's finding (the rule: `../contest.ts`), sent with the heal's
 * timeline note. Per provider (and queue shard), all in one slot:
 *
 * - `findings`: a hash, consumer key → the times of its last findings (`t1 t2 t3`, ms, newest last);
 * - `findings-at`: a sorted set, consumer key → its newest finding: what the window forgets, the
 *   cap's order;
 * - `contested`: a sorted set, consumer key → when it stops being contested (ms);
 * - `contested-why`: a hash, consumer key → `{since, n, last, at, w}` (JSON; `w`: the window);
 * - `loss-wave`: `<at> <key>`, the last login found missing, kept the wave's span (a string, PX);
 *   `<at> ` once a wave is seen (nothing left to take back).
 *
 * Each call forgets up to 100 findings older than the window and contests that ended, keeps
 * each set within the cap (the oldest go), and keeps the four keys twice the window past the
 * provider's last finding.
 */
import type { FindingOutcome } from '../contest.js';
import type { CoordinationKeys } from './keys.js';

/** The script's arguments. */
export interface FindingArgs {
  provider: string;
  key: string;
  now: number;
  windowMs: number;
  needed: number;
  lossWave: boolean;
  words: string;
  waveMs: number;
  cap: number;
}

/**
 * Counts one finding of the consumer `ARGV[1]` (see the file's comment).
 *
 * KEYS[1]  the provider's findings (hash: consumer key → `t1 t2 t3`, ms, newest last)
 * KEYS[2]  the provider's findings-at (sorted set: consumer key → its newest finding, ms)
 * KEYS[3]  the provider's contested (sorted set: consumer key → when its contest ends, ms)
 * KEYS[4]  the provider's contested-why (hash: consumer key → `{since, n, last, at, w}`, JSON)
 * KEYS[5]  the provider's loss wave (string: `<at> <key>`, or `<at> ` once a wave is seen; PX)
 * ARGV[1]  the consumer's key
 * ARGV[2]  now (ms): the finding's time
 * ARGV[3]  the window (ms)
 * ARGV[4]  how many findings within the window make it contested
 * ARGV[5]  '1' when the finding may be part of a loss wave, else ''
 * ARGV[6]  the finding in words (kept as `last`)
 * ARGV[7]  a loss wave's span (ms)
 * ARGV[8]  the cap of each set
 * Returns  {0, 0} when the finding is part of a loss wave (not counted, and the wave's first one
 *          taken back), {0, 1, <the wave's first finding, ms>} when it is the one that shows the wave; else {state, findings}: state 1 counted, 2 became contested, 3 still
 *          contested; findings: those in the window (at most ARGV[4]), or, still contested,
 *          the contest's count with this one
 */
const LUA = `
local key, now, window, need = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local wavy, words, waveMs, cap = ARGV[5] == '1', ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local function forget(set, hash, keys)
  for _, k in ipairs(keys) do
    redis.call('zrem', set, k)
    redis.call('hdel', hash, k)
  end
end
forget(KEYS[2], KEYS[1], redis.call('zrangebyscore', KEYS[2], '-inf', now - window, 'LIMIT', 0, 100))
forget(KEYS[3], KEYS[4], redis.call('zrangebyscore', KEYS[3], '-inf', now, 'LIMIT', 0, 100))
local function times(k)
  local out = {}
  for t in string.gmatch(redis.call('hget', KEYS[1], k) or '', '%d+') do
    if tonumber(t) > now - window then out[#out + 1] = tonumber(t) end
  end
  return out
end
if wavy then
  local wave = redis.call('get', KEYS[5])
  local at, first = string.match(wave or '', '^(%d+) (.*)$')
  if at and first ~= key then
    if first ~= '' then
      local kept = {}
      for _, t in ipairs(times(first)) do if t ~= tonumber(at) then kept[#kept + 1] = t end end
      if #kept == 0 then forget(KEYS[2], KEYS[1], {first}) else redis.call('hset', KEYS[1], first, table.concat(kept, ' ')) end
      local why = redis.call('hget', KEYS[4], first)
      if why and cjson.decode(why).since == tonumber(at) then forget(KEYS[3], KEYS[4], {first}) end
    end
    redis.call('set', KEYS[5], at .. ' ', 'PX', waveMs)
    if first ~= '' then return {0, 1, tonumber(at)} end
    return {0, 0}
  end
  redis.call('set', KEYS[5], now .. ' ' .. key, 'PX', waveMs)
end
local list = times(key)
list[#list + 1] = now
while #list > need do table.remove(list, 1) end
redis.call('hset', KEYS[1], key, table.concat(list, ' '))
redis.call('zadd', KEYS[2], now, key)
local function capped(set, hash)
  if redis.call('zcard', set) > cap then forget(set, hash, redis.call('zrange', set, 0, 0)) end
end
capped(KEYS[2], KEYS[1])
local until_ = tonumber(redis.call('zscore', KEYS[3], key))
local was = until_ ~= nil and until_ > now
local state, n = 1, #list
if was or n >= need then
  local since = now
  if was then
    local why = cjson.decode(redis.call('hget', KEYS[4], key) or '{}')
    since, n, state = why.since or now, (why.n or need) + 1, 3
  else
    state = 2
  end
  redis.call('zadd', KEYS[3], now + window, key)
  redis.call('hset', KEYS[4], key, cjson.encode({since = since, n = n, last = words, at = now, w = window}))
  capped(KEYS[3], KEYS[4])
end
for i = 1, 4 do redis.call('pexpire', KEYS[i], 2 * window) end
return {state, n}`;

/** {@link LUA} with its builder and reader, for the script table (`scripts.ts`). */
export const noteFinding = {
  keyCount: 5,
  lua: LUA,
  build: (k: CoordinationKeys, a: FindingArgs) => ({
    keys: [
      k.findings(a.provider),
      k.findingsAt(a.provider),
      k.contested(a.provider),
      k.contestedWhy(a.provider),
      k.lossWave(a.provider),
    ],
    argv: [a.key, a.now, a.windowMs, a.needed, a.lossWave ? '1' : '', a.words, a.waveMs, a.cap],
  }),
  reply: (raw: unknown): FindingOutcome => {
    const [state, n, since] = Array.isArray(raw) ? (raw as unknown[]).map(Number) : [0, 0];
    if (!state) return n === 1 ? { counted: false, waveBegan: true, waveSince: since ?? 0 } : { counted: false };
    return { counted: true, findings: n ?? 0, contested: state >= 2, became: state === 2 };
  },
};

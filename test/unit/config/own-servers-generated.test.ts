/**
 * Generated: admin addresses (host spellings, ports, url, Cluster and Sentinel forms, said
 * shared or not) and consumers' values (key and channel glob patterns, databases). Whatever is
 * drawn, a provider on holdfast's own server either is refused at load, naming it, or no consumer
 * the one spec check accepts can address any of holdfast's keys, channels or its store's
 * database: judged by Redis's own glob match (`test/support/redis-glob.ts`) over the names
 * holdfast really builds (`coordination/keys.ts`, BullMQ's under the shards' prefixes).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import type { HoldfastConfig } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { checkSpec } from '../../../src/policy/spec-check.js';
import { coordinationKeys, holdfastPrefix } from '../../../src/queue/coordination/keys.js';
import { redisGlobMatch } from '../../support/redis-glob.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-own-generated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every key holdfast builds under `prefix` (one per kind), and BullMQ's own beside them. */
function holdfastKeys(prefix: string, shards: number): string[] {
  return [...new Set([prefix, ...shardPrefixes(prefix, shards)])].flatMap((p) => {
    const table = coordinationKeys(holdfastPrefix(p));
    const own = Object.values(table).map((k) => (typeof k === 'function' ? k('cache/photos') : k));
    const bull = ['wait', 'meta', 'id', 'events', '1', 'stalled-check', 'marker'].map((t) => `${p}:consumers:${t}`);
    return [...own, ...bull];
  });
}

/** The channels that carry holdfast's keys: the keys as channels, their keyspace and keyevent notifications. */
const holdfastChannels = (keys: string[]) => [
  ...keys,
  ...keys.flatMap((k) => [`__keyspace@0__:${k}`, `__keyspace@2__:${k}`]),
  '__keyevent@0__:hset',
  '__keyevent@2__:expired',
];

/** The queue's Redis as each form may spell it: the same server, or another. */
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST.', '127.0.0.9', '[::ffff:127.0.0.1]', '0.0.0.0'];
const prefixes = fc.constantFrom('holdfast', '{holdfast}', 'hf', 'app:{hf}:x', 'a*b');
const fragment = fc.constantFrom(
  ...['*', '?', 'h', 'holdfast', 'hold', 'fast', ':', '{', '}', '-', '0', '[a-z]', '[^x]', '[gh]', '\\h', 'x'],
  ...['photos', 'consumers', '__keyspace@', '__keyevent@', '__:', 'a', 'b', '\\*', 'app', 'hf', 'due', 'states'],
);
/** A pattern of fragments, or one made from a name holdfast keeps (drawn by index): some bytes made `?`, `*` or a class, maybe cut short. */
type Pattern = string | { name: number; edits: Array<{ at: number; to: '?' | '*' | '[^x]' | 'cut' }> };
const pattern: fc.Arbitrary<Pattern> = fc.oneof(
  fc.array(fragment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('')),
  fc.record({
    name: fc.nat(),
    edits: fc.array(fc.record({ at: fc.nat({ max: 40 }), to: fc.constantFrom('?', '*', '[^x]', 'cut') }), {
      maxLength: 3,
    }),
  }),
);

/** `p` made a pattern against `names` (holdfast's own, as drawn). */
function patternOf(p: Pattern, names: readonly string[]): string {
  if (typeof p === 'string') return p;
  let text = names[p.name % names.length]!.replace(/[*?[\]\\]/g, '\\$&');
  for (const { at, to } of p.edits) {
    const i = Math.min(at, text.length - 1);
    if (text[i] === '\\' || text[i - 1] === '\\') continue; // an escape left whole
    text = to === 'cut' ? `${text.slice(0, i + 1)}*` : `${text.slice(0, i)}${to}${text.slice(i + 1)}`;
  }
  return text;
}
const database = fc.constantFrom('holdfast', 'HOLDFAST', 'records', 'Records', 'photos');

const drawn = fc.record({
  prefix: prefixes,
  shards: fc.constantFrom(1, 3),
  queuePort: fc.constantFrom(6379, 7001),
  storeDatabase: fc.constantFrom('holdfast', 'records'),
  form: fc.constantFrom('url', 'cluster', 'sentinels'),
  host: fc.constantFrom(...LOOPBACK),
  samePort: fc.boolean(),
  omitPort: fc.boolean(),
  shares: fc.boolean(),
  mongoHost: fc.constantFrom(...LOOPBACK),
  mongoSamePort: fc.boolean(),
  mongoShares: fc.boolean(),
  consumers: fc.array(
    fc.record({
      keys: fc.array(pattern, { maxLength: 3 }),
      channels: fc.array(pattern, { maxLength: 3 }),
      database,
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

type Drawn = typeof drawn extends fc.Arbitrary<infer T> ? T : never;

/** The configuration file drawn: the queue on 127.0.0.1, a redis-acl and a mongodb-users provider. */
function configText(d: Drawn): string {
  const port = d.samePort ? d.queuePort : 6390;
  const at = `redis://${d.host}${d.omitPort && port === 6379 ? '' : `:${port}`}`;
  const admin =
    d.form === 'url'
      ? `{ url: "${at}" }`
      : d.form === 'cluster'
        ? `{ cluster: ["redis://10.7.7.7:7000", "${at}"] }`
        : `{ sentinels: ["${at}"], master: mymaster }`;
  const mongoAt = `mongodb://${d.mongoHost}${d.mongoSamePort ? '' : ':27018'}/?authSource=admin`;
  return [
    'queue:',
    `  url: redis://127.0.0.1:${d.queuePort}`,
    `  prefix: "${d.prefix}"`,
    `  shards: ${d.shards}`,
    'store:',
    '  url: mongodb://127.0.0.1:27017',
    `  database: ${d.storeDatabase}`,
    'providers:',
    '  - name: cache',
    '    adapter: redis-acl',
    `    admin: ${admin}`,
    '    contributions: cache.yaml',
    '    policy: { allowAllKeys: true, allowAllChannels: true }',
    `    sharesHoldfastServer: ${d.shares}`,
    '  - name: catalog',
    '    adapter: mongodb-users',
    `    admin: { url: "${mongoAt}" }`,
    '    contributions: catalog.yaml',
    '    policy: { allowedDatabases: [holdfast, HOLDFAST, records, Records, photos] }',
    `    sharesHoldfastServer: ${d.mongoShares}`,
    '',
  ].join('\n');
}

describe("holdfast's own servers, generated", () => {
  it('no consumer of a provider on them can address a key, channel or database of holdfast', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(drawn, async (d) => {
        const path = join(dir, `holdfast-${run++}.yaml`);
        writeFileSync(path, configText(d));
        // what the test knows of the addresses it drew: the queue's server (a Sentinel is not its master)
        const onQueue = d.samePort && d.form !== 'sentinels';
        const onStore = d.mongoSamePort;
        let config: HoldfastConfig;
        try {
          config = await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false }, readOnly: true });
        } catch (error) {
          const said = String(error);
          expect(
            (onQueue && !d.shares) || (onStore && !d.mongoShares),
            `refused only for holdfast's servers: ${said}`,
          ).toBe(true);
          if (onQueue && !d.shares) expect(said).toContain("provider cache is on the queue's Redis");
          if (onStore && !d.mongoShares) expect(said).toContain("provider catalog is on the record store's server");
          return;
        }
        expect(onQueue && !d.shares, 'a provider on the queue was loaded unsaid').toBe(false);
        expect(onStore && !d.mongoShares, 'a provider on the store was loaded unsaid').toBe(false);
        const [cache, catalog] = config.providers as [(typeof config.providers)[0], (typeof config.providers)[0]];
        const keys = holdfastKeys(d.prefix, d.shards);
        const channels = holdfastChannels(keys);
        for (const [i, c] of d.consumers.entries()) {
          const id = `c${i}`;
          const [asked, heard] = [c.keys.map((p) => patternOf(p, keys)), c.channels.map((p) => patternOf(p, channels))];
          const redis = checkSpec(cache, { id, login: `app_${id}`, values: { keys: asked, channels: heard } });
          if ((onQueue || d.shares) && redis.problems.length === 0) {
            for (const p of asked)
              expect(
                keys.filter((k) => redisGlobMatch(p, k)),
                `key pattern ${p}`,
              ).toEqual([]);
            for (const p of heard)
              expect(
                channels.filter((k) => redisGlobMatch(p, k)),
                `channel pattern ${p}`,
              ).toEqual([]);
          }
          const mongo = checkSpec(catalog, { id, login: `app_${id}`, values: { database: c.database } });
          if ((onStore || d.mongoShares) && mongo.problems.length === 0)
            expect(c.database.toLowerCase()).not.toBe(d.storeDatabase.toLowerCase());
        }
      }),
      { numRuns: 150 },
    );
  });
});

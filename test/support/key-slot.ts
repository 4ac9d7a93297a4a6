/**
 * Redis Cluster's slot of a key (CRC16/XMODEM of its hash tag, or of the whole key, mod 16384),
 * computed here so that a test can choose a queue prefix whose shards land on distinct masters:
 * which master serves a slot is the cluster's choice, and N random tags over N masters all
 * differ only now and then.
 */

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot of `key`, by Redis's rule: the text between the first `{` and the next `}`, when not empty, else the key. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(new TextEncoder().encode(hashed)) % 16384;
}

/** The first of `prefixes` whose shard prefixes (`shardsOf(prefix)`) land on as many distinct masters as there are shards. */
export function prefixOverMasters(prefixes: Iterable<string>, shardsOf: (prefix: string) => string[], masterOf: (slot: number) => string): string | undefined {
  for (const prefix of prefixes) {
    const shards = shardsOf(prefix);
    if (new Set(shards.map((p) => masterOf(keySlot(p)))).size === shards.length) return prefix;
  }
  return undefined;
}

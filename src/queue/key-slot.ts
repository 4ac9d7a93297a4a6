/**
 * Which of a Redis Cluster's 16384 slots a key is in, by Redis's own rule: CRC16 (XMODEM) of
 * its hash tag (the text between the first `{` and the first `}` after it, when not empty),
 * else of the whole key, modulo 16384. The status uses it to name the node that owns a shard.
 */

const encoder = new TextEncoder();

/** CRC16-XMODEM (polynomial 0x1021, initial 0) of `bytes`. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The cluster slot of `key` (0 … 16383). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(encoder.encode(hashed)) % 16384;
}

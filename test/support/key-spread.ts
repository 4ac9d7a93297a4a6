/**
 * Where a sharded queue's keys are: how many keys of each shard (by its prefix) each Redis
 * holds. Given one client it counts keys per hash tag; given a client per master of a Redis
 * Cluster it counts keys per master.
 */
import type { Redis } from 'ioredis';

/** `text` as a literal in a SCAN MATCH pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** How many keys `client` holds that match the SCAN pattern `pattern`. */
export async function countMatching(client: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    count += keys.length;
  } while (cursor !== '0');
  return count;
}

/** `counts[c][s]`: how many keys starting with `prefixes[s]` client `c` holds. */
export async function keysPerPrefix(clients: readonly Redis[], prefixes: readonly string[]): Promise<number[][]> {
  return Promise.all(
    clients.map((client) => Promise.all(prefixes.map((prefix) => countMatching(client, `${globLiteral(prefix)}*`)))),
  );
}

/** The keys of each shard, summed over `clients` (per hash tag). */
export async function keysPerShard(clients: readonly Redis[], prefixes: readonly string[]): Promise<number[]> {
  const counts = await keysPerPrefix(clients, prefixes);
  return prefixes.map((_, s) => counts.reduce((sum, row) => sum + row[s]!, 0));
}

/** The keys of every shard each client holds (per master, on a cluster). */
export async function keysPerClient(clients: readonly Redis[], prefixes: readonly string[]): Promise<number[]> {
  return (await keysPerPrefix(clients, prefixes)).map((row) => row.reduce((a, b) => a + b, 0));
}

/**
 * A tenant reading its key over and over, in a process of its own (so that what the test's
 * process does cannot delay it): `GET <key>` as `<login>`, one after another with a pause of
 * 20 ms, each timed. Prints `ready` after the first answer; on `stop` (a line on stdin) prints
 * `{"samples":n,"maxMs":m,"slow":[…]}` (every sample over 200 ms, at most 20) and exits.
 *
 *   node --import tsx test/support/get-sampler.ts <host> <port> <login> <password> <key>
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';

const [host, port, username, password, key] = process.argv.slice(2) as [string, string, string, string, string];
const redis = new Redis({
  host,
  port: Number(port),
  username,
  password,
  enableOfflineQueue: true,
  maxRetriesPerRequest: null,
});
let stopping = false;
let samples = 0;
let maxMs = 0;
const slow: number[] = [];
process.stdin.on('data', () => (stopping = true));

while (!stopping) {
  const started = performance.now();
  await redis.get(key);
  const ms = performance.now() - started;
  if (samples === 0) process.stdout.write('ready\n');
  samples++;
  maxMs = Math.max(maxMs, ms);
  if (ms > 200 && slow.length < 20) slow.push(Math.round(ms));
  await new Promise((resolve) => setTimeout(resolve, 20));
}
process.stdout.write(`${JSON.stringify({ samples, maxMs: Math.round(maxMs * 10) / 10, slow })}\n`);
redis.disconnect();
process.exit(0);

/**
 * `npx tsx test/bench/deep-check-cost.ts [users]`: what a `redis-acl` deep check costs, and what
 * reading a server's command table costs. Starts its own redis-server, creates `users` logins
 * (default 1,000) with the README's rules (the default deny list after them), then times:
 * deep checks one at a time and in batches of 256, a fresh connection's first deep check (where
 * the command table is read), and the command table read alone. Each row: holdfast's CPU and wall
 * time per call, and the server's time in commands per call (`INFO commandstats`), with the
 * commands it was sent. Runs against any revision whose adapter has `holds` and `holdsMany`.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { AdminConnection, Grant } from '../../src/adapters/adapter.js';
import { RedisAclAdapter, redisAcl, type RedisAclValues } from '../../src/adapters/redis-acl/index.js';
import { startOwned } from '../backends/provision.js';
import { createRunDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';
import { costBetween, redisCost, type RedisCost } from './measure.js';

const USERS = Number(process.argv[2] ?? 1000);
const SAMPLES = 2000;
const FRESH = 20;
const within = () => ({ signal: AbortSignal.timeout(30_000) });

function sent(cost: RedisCost, per: number): string {
  return [...cost.calls]
    .filter(([name, n]) => n > 0 && name !== 'info')
    .map(([name, n]) => `${name} ×${(n / per).toFixed(n / per < 10 ? 2 : 0)}`)
    .join(', ');
}

async function measure(admin: Redis, name: string, per: number, work: () => Promise<unknown>): Promise<string> {
  const before = await redisCost(admin);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const wallMs = (performance.now() - started) / per;
  const used = process.cpuUsage(cpu);
  const cost = costBetween(before, await redisCost(admin));
  const serverUs = (cost.commandUs - (cost.usec.get('info') ?? 0)) / per;
  const holdfastUs = (used.user + used.system) / per;
  return `${name.padEnd(58)} ${serverUs.toFixed(1).padStart(10)} ${holdfastUs.toFixed(1).padStart(12)} ${(wallMs * 1000).toFixed(1).padStart(10)}  ${sent(cost, per)}`;
}

const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
let server: OwnedBackend | undefined;
try {
  server = await startOwned('redis', run, settings, false);
  const b = server;
  const url: AdminConnection = {
    url: `redis://${b.host}:${b.port}`,
    username: b.admin.username,
    password: b.admin.password,
  };
  const admin = new Redis(b.url);
  const adapter = new RedisAclAdapter(url, { provider: 'bench', adopt: false });
  const grants: Array<Grant<RedisAclValues>> = Array.from({ length: USERS }, (_, i) => ({
    login: `deep_${i}`,
    password: randomBytes(12).toString('hex'),
    values: redisAcl.valuesSchema.parse({
      keys: [`deep_${i}:*`],
      channels: [`deep_${i}:*`],
      commands: ['+@read', '+@write', '+@connection', '+@pubsub'],
    }),
  }));
  for (let i = 0; i < grants.length; i += 64)
    await Promise.all(grants.slice(i, i + 64).map((g) => adapter.create(g, within())));
  await adapter.holds(grants[0]!, within()); // connected, and whatever the revision learns once
  const held = (answer: { held: boolean }) => {
    if (!answer.held) throw new Error(`not held: ${JSON.stringify(answer)}`);
  };
  const rows = [
    `${'per call'.padEnd(58)} ${'server µs'.padStart(10)} ${'holdfast µs'.padStart(12)} ${'wall µs'.padStart(10)}  sent`,
  ];
  rows.push(
    await measure(admin, `deep check, one at a time (${SAMPLES} of ${USERS} logins)`, SAMPLES, async () => {
      for (let i = 0; i < SAMPLES; i++) held(await adapter.holds(grants[i % USERS]!, within()));
    }),
  );
  rows.push(
    await measure(admin, `deep check, in batches of 256 (${SAMPLES} checks)`, SAMPLES, async () => {
      for (let i = 0; i < SAMPLES; i += 256) {
        const batch = Array.from({ length: Math.min(256, SAMPLES - i) }, (_, j) => grants[(i + j) % USERS]!);
        for (const a of await adapter.holdsMany(batch, within())) held(a.ok ? a.value : { held: false });
      }
    }),
  );
  rows.push(
    await measure(admin, `a new connection's first deep check (${FRESH} connections)`, FRESH, async () => {
      for (let i = 0; i < FRESH; i++) {
        const fresh = new RedisAclAdapter(url, { provider: 'bench', adopt: false });
        held(await fresh.holds(grants[i]!, within()));
        await fresh.close();
      }
    }),
  );
  const table = await import('../../src/adapters/redis-acl/command-table.js').catch(() => undefined);
  if (table !== undefined) {
    rows.push(
      await measure(admin, `the command table alone: COMMAND + ACL CAT, parsed (${FRESH} reads)`, FRESH, async () => {
        for (let i = 0; i < FRESH; i++) {
          const [commands, categories] = await Promise.all(
            table.COMMAND_TABLE_QUERY.map(([c, ...a]) => admin.call(c, ...a)),
          );
          table.parseCommandTable(commands, categories);
        }
      }),
    );
  }
  await adapter.close();
  admin.disconnect();
  console.log(`${b.flavor}, ${USERS} logins\n${rows.join('\n')}`);
} finally {
  await server?.stop();
  await reapRunDir(run);
}

/**
 * `npx tsx test/bench/status-at-scale.ts [N] [--hold]`: how long `holdfast status` takes with N
 * consumers (default 100,000): every one held, 1% of them unserved, none asked for 10
 * minutes (no worker running), and every one lost (the incident); on a local
 * Redis and FerretDB it starts. The status reads the consumers in brief from the queue's
 * Redis and one small document per provider from the store: no record.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { Redis } from 'ioredis';
import { ADAPTERS } from '../../src/adapters/registry.js';
import { loadConfig } from '../../src/config/load-config.js';
import { connectCoordination, connectStore } from '../../src/engine/engine.js';
import { encodeBrief, type ConsumerBrief } from '../../src/queue/consumer-brief.js';
import { statusReport } from '../../src/status/status-report.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { createRunDir, instanceDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';

const n = Number(process.argv[2] ?? 100_000);
/** `--hold`: the world is kept after the figures, for profiling the command by hand, until interrupted. */
const hold = process.argv.includes('--hold');
const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
const docker = await useDocker(settings);
const [queue, store] = await Promise.all([
  startOwned('redis', run, settings, docker),
  startOwned('mongodb', run, settings, docker),
]);
try {
  const dir = instanceDir(run, 'status');
  mkdirSync(join(dir, 'secrets'), { recursive: true });
  writeFileSync(join(dir, 'secrets/queue'), queue.admin.password);
  writeFileSync(join(dir, 'secrets/store'), store.admin.password);
  writeFileSync(join(dir, 'cache.yaml'), 'consumers: []\n');
  writeFileSync(
    join(dir, 'holdfast.yaml'),
    [
      `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
      `store: { url: "mongodb://${store.host}:${store.port}/?authSource=admin", username: ${store.admin.username}, passwordFile: secrets/store }`,
      'providers:',
      '  - { name: cache, adapter: redis-acl, admin: { url: "redis://127.0.0.1:1" }, contributions: cache.yaml }',
    ].join('\n'),
  );
  const config = await loadConfig(join(dir, 'holdfast.yaml'), {
    adapters: ADAPTERS,
    environment: { stdoutIsTTY: false },
  });

  // the store: a record per consumer is what a running holdfast has (the status must not read them)
  const client = new MongoClient(`mongodb://${store.host}:${store.port}/?authSource=admin`, {
    auth: { username: store.admin.username, password: store.admin.password },
  });
  const now = Date.now();
  const db = client.db(config.store.database);
  const docs = Array.from({ length: n }, (_, i) => ({
    _id: `cache/c${i}`,
    provider: 'cache',
    machine: { state: 'held' },
    history: Array.from({ length: 5 }, () => ({ at: new Date(now), from: 'applying', to: 'held', reason: 'applied' })),
  }));
  for (let i = 0; i < n; i += 5000) await db.collection('consumers').insertMany(docs.slice(i, i + 5000) as never[]);
  await db.collection('providers').insertOne({
    _id: 'cache' as never,
    contributionsError: null,
    errorSince: null,
    lastGoodAt: new Date(now),
    consumers: n,
  });
  await client.close();

  const redis = new Redis({
    host: queue.host,
    port: queue.port,
    username: queue.admin.username,
    password: queue.admin.password,
  });
  const brief = (i: number, state: ConsumerBrief['state']): ConsumerBrief => ({
    rev: 3,
    state,
    since: now - 3_600_000,
    login: `app_c${i}`,
    brakeCount: 0,
    reason: state === 'held' ? 'applied' : 'not held: gone',
    dueAt: now + 30_000,
    lastCheck: { at: now - 10_000, outcome: 'held', detail: null },
  });
  const prefix = `${config.queue.prefix}:holdfast`;
  for (let i = 0; i < n; i += 5000) {
    const args: string[] = [];
    const states: string[] = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) {
      args.push(`cache/c${j}`, encodeBrief(brief(j, 'held')));
      states.push(`cache/c${j}`, 'held 3');
      await redis.hset(
        `${prefix}:checks`,
        `cache/c${j}`,
        JSON.stringify({ at: now - 10_000, outcome: 'held', detail: null, rev: 3, deepAt: now - 10_000 }),
      );
    }
    await redis.hset(`${prefix}:briefs`, ...args);
    await redis.hset(`${prefix}:states`, ...states);
    const checked: Array<string | number> = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) checked.push(now - 10_000 + j / n, `cache/c${j}`);
    await redis.zadd(`${prefix}:checked:cache`, ...checked);
  }
  await redis.set(`${prefix}:alive`, new Date().toISOString());

  const time = async (label: string) => {
    const { client: c, store: s } = await connectStore(config, { create: false });
    const { redis: r, coordination } = connectCoordination(config);
    const t0 = performance.now();
    const report = await statusReport({ store: s, coordination, providers: config.providers }, new Date());
    const inProcess = performance.now() - t0;
    r.disconnect();
    await c.close();
    // as installed (`npm run build`: dist/), else through tsx (which adds its own start-up)
    const built = join(import.meta.dirname, '../../dist/src/cli/main.js');
    const command = existsSync(built)
      ? [built]
      : ['--import', 'tsx', join(import.meta.dirname, '../../src/cli/main.ts')];
    // the command's own CPU (user + system) as GNU time reports it, where it is installed
    const timed = existsSync('/usr/bin/time');
    const argv = [
      ...(timed ? ['-f', 'cpu %U %S'] : []),
      process.execPath,
      ...command,
      'status',
      '-c',
      join(dir, 'holdfast.yaml'),
    ];
    const t1 = performance.now();
    const cli = spawnSync(timed ? '/usr/bin/time' : argv.shift()!, argv, { encoding: 'utf8' });
    const whole = performance.now() - t1;
    const lines = cli.stdout.split('\n').length;
    const cpu = /cpu ([\d.]+) ([\d.]+)/.exec(cli.stderr);
    const cpuText = cpu ? `, ${((Number(cpu[1]) + Number(cpu[2])) * 1000).toFixed(0)} ms CPU` : '';
    console.log(
      `${label}: statusReport ${inProcess.toFixed(0)} ms in process; \`${existsSync(built) ? 'node dist/src/cli/main.js' : 'tsx src/cli/main.ts'} status\` ${whole.toFixed(0)} ms as a command${cpuText} (exit ${cli.status}, ${lines} lines), healthy ${report.healthy}, ${report.unserved} unserved listed`,
    );
  };
  const bytes = async (key: string) => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const [stateBytes, briefBytes, checkedBytes] = await Promise.all([
    bytes(`${prefix}:states`),
    bytes(`${prefix}:briefs`),
    bytes(`${prefix}:checked:cache`),
  ]);
  console.log(
    `the queue's Redis, for the status, per consumer: state ${(stateBytes / n).toFixed(0)} B, record in brief ${(briefBytes / n).toFixed(0)} B, checked sorted set ${(checkedBytes / n).toFixed(0)} B`,
  );
  await time(`${n} held`);
  const unserved = Math.round(n / 100);
  const args: string[] = [];
  const states: string[] = [];
  for (let j = 0; j < unserved; j++) {
    args.push(`cache/c${j * 100}`, encodeBrief(brief(j * 100, 'backoff')));
    states.push(`cache/c${j * 100}`, 'backoff 3');
  }
  await redis.hset(`${prefix}:briefs`, ...args);
  await redis.hset(`${prefix}:states`, ...states);
  await time(`${n} consumers, ${unserved} not held`);
  // no worker for 10 minutes: every check is old
  for (let i = 0; i < n; i += 5000) {
    const old: Array<string | number> = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) old.push(now - 600_000, `cache/c${j}`);
    await redis.zadd(`${prefix}:checked:cache`, ...old);
  }
  await time(`${n} consumers, none asked for 10 min`);
  // the incident: the cache forgot every login, every consumer is lost and listed
  for (let i = 0; i < n; i += 5000) {
    const lost: string[] = [];
    const lostStates: string[] = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) {
      lost.push(`cache/c${j}`, encodeBrief(brief(j, 'lost')));
      lostStates.push(`cache/c${j}`, 'lost 3');
    }
    await redis.hset(`${prefix}:briefs`, ...lost);
    await redis.hset(`${prefix}:states`, ...lostStates);
  }
  await time(`${n} consumers, every one lost`);
  redis.disconnect();
  if (hold) {
    // kept for profiling by hand: `node dist/src/cli/main.js status -c <file>` until interrupted
    console.log(`world kept: ${join(dir, 'holdfast.yaml')} (Ctrl-C ends it)`);
    await new Promise((resolve) => process.once('SIGINT', resolve));
  }
} finally {
  await Promise.allSettled([queue.stop(), store.stop()]);
  await reapRunDir(run);
}

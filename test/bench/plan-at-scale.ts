/**
 * `npx tsx test/bench/plan-at-scale.ts [N]`: how long `holdfast plan` takes over N consumers
 * (default 10,000), seeded held (records, logins, fingerprints) on a local Redis and FerretDB it
 * starts, with a proposed file that widens 1% of them, adds 10, and drops 1% (enough to trip the
 * mass-removal guard: no, 1% is under its 25%), and 5 logins dropped by hand (drifted). The CLI is run as an
 * operator runs it, through tsx from source (and the compiled one when `npm run build` made it),
 * as a routine check asks (light, deep to confirm) and with `--deep` (every consumer's rules
 * compared), twice each; each run's wall time, exit code and the plan's counts are reported.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import type { PlanReport } from '../../src/plan/plan-report.js';
import { BenchEnv } from './bench-env.js';
import { seedHeld } from './seed.js';

const n = Number(process.argv[2] ?? 10_000);
const say = (text: string) => process.stdout.write(`${text}\n`);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const cliFromSource = join(import.meta.dirname, '../../src/cli/main.ts');
const cliCompiled = join(import.meta.dirname, '../../dist/src/cli/main.js');

say(`plan at scale: ${n} consumers; load ${load()}`);
const env = await BenchEnv.create(n);
try {
  const { path, config } = await env.configure('plan', { verifyEvery: '60s' });
  const seededAt = Date.now();
  await seedHeld(env, config);
  say(`seeded ${n} held in ${Date.now() - seededAt} ms`);

  // the proposed file: 1% widened (a second key pattern), 10 added, the last 1% dropped
  const items = readFileSync(join(env.dir, 'contributions/cache.yaml'), 'utf8').split('\n  - ').slice(1);
  const widened = Math.floor(n / 100);
  const kept = items
    .slice(0, n - Math.floor(n / 100))
    .map((item, i) => (i < widened ? item.replace(/keys: \["(c\d+):\*"\]/, 'keys: ["$1:*", "$1:more:*"]') : item));
  const added = Array.from({ length: 10 }, (_, i) => {
    const id = `new${i}`;
    writeFileSync(join(env.dir, 'grants', `${id}.secret`), `new-password-${i}-long-enough\n`, { mode: 0o600 });
    return `id: ${id}\n    login: hf_${id}\n    secret: ../grants/${id}.secret\n    values: { keys: ["${id}:*"], commands: ["+@read"] }\n`;
  });
  const proposed = join(env.dir, 'contributions/cache.proposed.yaml');
  writeFileSync(proposed, `consumers:\n${[...kept, ...added].map((item) => `  - ${item.trimEnd()}`).join('\n')}\n`);

  // five logins dropped by hand: drifted now
  const cache = new Redis({
    host: env.cache.host,
    port: env.cache.port,
    username: env.cache.admin.username,
    password: env.cache.admin.password,
  });
  for (const c of env.consumers.slice(n / 2, n / 2 + 5)) await cache.call('ACL', 'DELUSER', c.login);
  cache.disconnect();

  const clis: Array<[string, string[]]> = [['tsx (from source)', ['--import', 'tsx', cliFromSource]]];
  if (existsSync(cliCompiled)) clis.push(['compiled (dist)', [cliCompiled]]);
  const runs = clis.flatMap(([label, argv]) =>
    [[], ['--deep']].map((more): [string, string[]] => [`${label}${more.length ? ' --deep' : ''}`, [...argv, ...more]]),
  );
  for (const [label, argv] of runs) {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const at = performance.now();
      const [node, more] = [argv.filter((a) => a !== '--deep'), argv.filter((a) => a === '--deep')];
      const run = spawnSync(
        process.execPath,
        [...node, 'plan', '-c', path, '--contributions', `cache=${proposed}`, '--json', ...more],
        { encoding: 'utf8', maxBuffer: 256 << 20 },
      );
      const ms = Math.round(performance.now() - at);
      let counts = run.stderr.slice(0, 300);
      try {
        const p = (JSON.parse(run.stdout) as PlanReport).providers[0]!;
        counts = `create ${p.create.length}, change ${p.change.length}, remove ${p.remove?.consumers.length ?? 0}, refused ${p.refused.length}, drifted ${p.drifted.length}, unchanged ${p.unchanged}, not asked ${p.notAsked.length}`;
      } catch {
        // said as the output's start
      }
      say(`${label} run ${attempt}: ${ms} ms, exit ${run.status}; ${counts}; load ${load()}`);
    }
  }
} finally {
  await env.close();
}

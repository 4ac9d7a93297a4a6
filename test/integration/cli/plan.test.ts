/**
 * `holdfast plan` end to end on real servers: a proposed contributions file that adds two
 * consumers, widens one's key patterns, removes enough to trip the mass-removal guard and holds
 * one entry outside the policy is planned as such (exit 2), and the servers behind it (the
 * provider's Redis, the record store, the queue's Redis, each reached through a proxy that notes
 * every command) receive only reads. The same file applied by `holdfast run` does what the plan
 * said; a plan afterwards exits 0; a login dropped by hand is planned as drifted.
 *
 * Fail-without (each made by hand, seen failing, reverted): the plan saving a provider status
 * (`update` twice at the store's counter); reading a confirmation by writing one (`SET …:confirm-
 * removals:cache` at the queue's); removing the kept logins (`ACL DELUSER` ×5 at the provider's,
 * at the provider's); applying them (`create`: it sends no `ACL SETUSER` to a login that holds, so
 * only the drifted login healed by it fails the test); the deep check's scratch probe of earlier
 * releases (their `src/adapters/redis-acl` put back: `MULTI`, `ACL SETUSER holdfast-canon-b0d47459`,
 * `ACL DELUSER …`, `EXEC` fail it; the `--deep` plan now reads the command table instead). The
 * store's narrow type (`Pick<ConsumerStore, 'scan'>`) refuses `setProviderStatus` at compile time.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { PlanReport } from '../../../src/plan/plan-report.js';
import { exitOf, spawnHoldfast, type HoldfastProcess } from '../../support/holdfast-cli.js';
import { mongoOpCounter, type MongoOpCounter } from '../../support/mongo-op-counter.js';
import {
  redisCommandCounter,
  type RedisCommand,
  type RedisCommandCounter,
} from '../../support/redis-command-counter.js';
import { engineFixtures, type Consumer, type EngineFixture } from '../engine/engine-fixture.js';

/** What a plan may send the queue's Redis: its handshake, and the read of a person's confirmation. */
const QUEUE_READS = new Set([
  'AUTH',
  'HELLO',
  'INFO',
  'CLIENT SETNAME',
  'CLIENT SETINFO',
  'SELECT',
  'PING',
  'GET',
  'QUIT',
]);
/**
 * What a plan may send the provider's Redis: its handshake, node discovery (`ROLE`, `INFO`, `CONFIG GET masteruser`),
 * the light check's `AUTH` as a consumer, and the deep check's `ACL GETUSER` and command table (`COMMAND`, `ACL CAT`).
 * Nothing else: no scratch user, no transaction.
 */
const CACHE_READS = new Set([
  'AUTH',
  'HELLO',
  'INFO',
  'CLIENT SETNAME',
  'CLIENT SETINFO',
  'SELECT',
  'PING',
  'ROLE',
  'CONFIG GET',
  'ACL GETUSER',
  'COMMAND',
  'ACL CAT',
  'QUIT',
]);
/** What a plan may send the record store: its handshake, and reads. */
const STORE_READS = new Set([
  'op_query',
  'hello',
  'isMaster',
  'ismaster',
  'buildInfo',
  'saslStart',
  'saslContinue',
  'ping',
  'find',
  'getMore',
  'killCursors',
  'endSessions',
]);

/** The commands of `seen` that are not in `reads`. */
function writesAmong(seen: readonly RedisCommand[], reads: ReadonlySet<string>): string[] {
  return seen.filter((c) => !reads.has(c.name)).map((c) => `${c.name} ${c.target ?? ''}`.trim());
}

async function holdfastOnce(args: string[]): Promise<{ code: number | null | 'still running'; output: string }> {
  const child = spawnHoldfast(args);
  const code = await exitOf(child, 90_000);
  return { code, output: child.output() };
}

/** Writes `text` whole, then renames it into place, as a deployment tool would. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

/** A contributions item of the fixture's redis-acl provider. */
function item(f: EngineFixture, id: string, keys: string[]): string {
  return `  - id: ${id}\n    login: t${f.tag}_${id}\n    secret: ../grants/${id}.secret\n    values: { keys: ${JSON.stringify(keys)}, commands: ["+@read", "+@write", "+@connection"] }\n`;
}

/** The key patterns the provider's Redis holds for `login`. */
async function keysOf(admin: Redis, login: string): Promise<string | null> {
  const user = (await admin.call('ACL', 'GETUSER', login)) as unknown[] | null;
  if (user === null) return null;
  const at = user.indexOf('keys');
  return String(user[at + 1]);
}

describe('holdfast plan', () => {
  const fixture = engineFixtures();
  const counters: Array<RedisCommandCounter | MongoOpCounter> = [];
  let run: HoldfastProcess | undefined;
  let admin: Redis | undefined;
  afterAll(async () => {
    run?.kill('SIGKILL');
    admin?.disconnect();
    await Promise.all(counters.map((c) => c.close()));
  });

  it('plans a proposed change read-only and exactly as holdfast run then does it; a login dropped by hand is drifted', async () => {
    const f = await fixture({ consumers: 10 });
    const config = join(f.dir, 'holdfast.yaml');
    const engine = await f.startHeld();
    await engine.stop();
    f.engines.splice(0);
    admin = new Redis({
      host: f.provider.host,
      port: f.provider.port,
      username: f.provider.admin.username,
      password: f.provider.admin.password,
    });

    // the proposed file, in another directory (a pull request's checkout): its secrets are found from where it lands
    const [widened, ...rest] = f.consumers as [Consumer, ...Consumer[]];
    const keptAsIs = rest.slice(0, 5);
    const dropped = rest.slice(5); // 4 of 10: more than the guard's 25% and more than its floor of 2
    for (const id of ['n1', 'n2', 'evil'])
      writeFileSync(join(f.dir, 'grants', `${id}.secret`), `${id}-password-long-enough\n`, { mode: 0o600 });
    mkdirSync(join(f.dir, 'proposed'));
    const proposed = join(f.dir, 'proposed/cache.yaml');
    const proposedText = [
      'consumers:\n',
      item(f, widened.id, [`${widened.id}:*`, `${widened.id}:more:*`]),
      ...keptAsIs.map((c) => item(f, c.id, [`${c.id}:*`])),
      item(f, 'n1', ['n1:*']),
      item(f, 'n2', ['n2:*']),
      item(f, 'evil', [`${keptAsIs[0]!.id}:*`]), // another consumer's keys: outside the policy
    ].join('');
    writeFileSync(proposed, proposedText);
    const evilLine = proposedText.split('\n').findIndex((l) => l.includes('id: evil')) + 1;

    // the plan's own configuration: the same, each server reached through a proxy that notes its commands
    const [queue, cache, store] = await Promise.all([
      redisCommandCounter(f.provider),
      redisCommandCounter(f.provider),
      mongoOpCounter(storeEndpoint(f)),
    ]);
    counters.push(queue, cache, store);
    const planConfig = join(f.dir, 'plan.yaml');
    writeFileSync(
      planConfig,
      readFileSync(config, 'utf8')
        .replace(/\n {2}url: redis:\/\/[^\n]+/, `\n  url: redis://127.0.0.1:${queue.endpoint.port}`)
        .replace(/\n {6}url: redis:\/\/[^\n]+/, `\n      url: redis://127.0.0.1:${cache.endpoint.port}`)
        .replace(/\n {2}url: mongodb:\/\/[^/\n]+\//, `\n  url: mongodb://127.0.0.1:${store.endpoint.port}/`),
    );

    const planned = await holdfastOnce(['plan', '-c', planConfig, '--contributions', `cache=${proposed}`]);
    const json = await holdfastOnce([
      'plan',
      '-c',
      planConfig,
      '--contributions',
      `cache=${proposed}`,
      '--json',
      '--deep',
    ]);

    // nothing but reads reached any server
    expect(writesAmong(queue.commands, QUEUE_READS)).toEqual([]);
    expect(writesAmong(cache.commands, CACHE_READS)).toEqual([]);
    expect(store.commands.map((c) => c.command).filter((c) => !STORE_READS.has(c))).toEqual([]);
    // and the reads were made: the records scanned, the backend asked, the confirmation looked for
    expect(store.commands.some((c) => c.command === 'find')).toBe(true);
    // the consumers kept: a light check each (AUTH as the consumer) by the first plan, a deep one each by --deep
    const asked = (name: string) =>
      new Set(cache.commands.filter((c) => c.name === name && c.target?.startsWith(`t${f.tag}_`)).map((c) => c.target));
    expect([...asked('AUTH')].sort()).toEqual(keptAsIs.map((c) => c.login).sort());
    expect([...asked('ACL GETUSER')].sort()).toEqual(keptAsIs.map((c) => c.login).sort());
    // the deep checks ran on the server's command table, read once per plan (one connection)
    expect(cache.commands.filter((c) => c.name === 'COMMAND').length).toBeGreaterThan(0);
    expect(cache.commands.filter((c) => c.name === 'COMMAND').length).toBeLessThanOrEqual(2);
    expect(queue.commands.some((c) => c.name === 'GET')).toBe(true);

    expect(planned.code).toBe(2);
    const out = planned.output;
    expect(out).toContain(`+ create  cache/n1 (login t${f.tag}_n1) at ${proposed}:`);
    expect(out).toContain(`+ create  cache/n2 (login t${f.tag}_n2)`);
    expect(out).toMatch(
      new RegExp(`~ change  cache/${widened.id} .*\\n\\s+key patterns added: "${widened.id}:more:\\*" \\(widened\\)`),
    );
    for (const c of dropped) expect(out).toContain(`- remove  ${c.key} (login ${c.login})`);
    expect(out).toContain('held back by the mass-removal guard: 4 removals of 10 consumers');
    expect(out).toMatch(
      new RegExp(`confirm with: holdfast confirm-removals cache --change [0-9a-f]{12} -c ${planConfig}`),
    );
    expect(out).toContain('! refused cache/evil');
    expect(out).toContain(`${proposed}:${evilLine}: `);
    expect(out).toContain('2 to create, 1 to change, 4 to remove (held back), 1 refused, 0 drifted now, 5 unchanged');
    for (const c of f.consumers) expect(out).not.toContain(c.password);

    expect(json.code).toBe(2);
    const report = JSON.parse(json.output) as PlanReport;
    const cachePlan = report.providers[0]!;
    expect(cachePlan.create.map((c) => c.key)).toEqual(['cache/n1', 'cache/n2']);
    expect(cachePlan.change).toEqual([
      expect.objectContaining({
        key: widened.key,
        differences: [`key patterns added: "${widened.id}:more:*" (widened)`],
      }),
    ]);
    expect(cachePlan.remove).toMatchObject({ heldBack: true, confirmed: false, of: 10 });
    expect(cachePlan.remove!.consumers.map((c) => c.key)).toEqual(dropped.map((c) => c.key));
    expect(cachePlan.refused).toEqual([expect.objectContaining({ key: 'cache/evil', keepsAccepted: false })]);
    expect(cachePlan.refused[0]!.problems.join('\n')).toContain(`${proposed}:${evilLine}`);
    expect(cachePlan).toMatchObject({ drifted: [], notAsked: [], unchanged: 5 });

    // the same file, applied by holdfast run: held back until confirmed, then exactly what was planned
    replace(join(f.dir, 'contributions/cache.yaml'), proposedText);
    run = spawnHoldfast(['run', '-c', config]);
    await f.until(
      'the removals held back',
      async () => {
        // the change as the running holdfast holds it back, named as its status prints it
        const change = /--change ([0-9a-f]{12})/.exec((await holdfastOnce(['status', '-c', config])).output)?.[1];
        return (
          change !== undefined &&
          (await holdfastOnce(['confirm-removals', 'cache', '--change', change, '-c', config])).code === 0
        );
      },
      60_000,
    );
    await f.until(
      'the planned change done',
      async () => {
        const [n1, n2] = [f.consumers[0]!, f.consumers[0]!].map((c, i) => ({
          ...c,
          id: `n${i + 1}`,
          login: `t${f.tag}_n${i + 1}`,
          password: `n${i + 1}-password-long-enough`,
        }));
        const logins = await Promise.all([f.canLogin(n1!), f.canLogin(n2!), ...dropped.map((c) => f.canLogin(c))]);
        return (
          logins.join() === [true, true, ...dropped.map(() => false)].join() &&
          (await keysOf(admin!, widened.login)) === `~${widened.id}:* ~${widened.id}:more:*`
        );
      },
      60_000,
    );
    expect(await admin.call('ACL', 'GETUSER', `t${f.tag}_evil`)).toBeNull();
    for (const c of keptAsIs) expect(await f.canLogin(c)).toBe(true);

    // afterwards: nothing left to do but the refused entry; once it is dropped too, nothing at all
    await f.until(
      'a plan finds nothing but the refusal',
      async () => {
        const again = await holdfastOnce(['plan', '-c', config, '--json']);
        const p = (JSON.parse(again.output) as PlanReport).providers[0]!;
        return (
          again.code === 2 &&
          p.create.length + p.change.length + p.drifted.length === 0 &&
          p.remove === null &&
          p.refused.length === 1
        );
      },
      60_000,
    );
    replace(join(f.dir, 'contributions/cache.yaml'), proposedText.slice(0, proposedText.indexOf('  - id: evil')));
    let last = { code: null as number | null | 'still running', output: '' };
    await f.until('a plan exits 0', async () => (last = await holdfastOnce(['plan', '-c', config])).code === 0, 60_000);
    expect(last.output).toContain('0 to create, 0 to change, 0 to remove, 0 refused, 0 drifted now, 8 unchanged');

    // a login dropped by hand (holdfast stopped, so nothing heals it first): drifted now
    run.kill('SIGTERM');
    expect(await exitOf(run)).toBe(0);
    await admin.call('ACL', 'DELUSER', keptAsIs[1]!.login);
    const drifted = await holdfastOnce(['plan', '-c', config]);
    expect(drifted.code).toBe(1);
    expect(drifted.output).toContain(`? drifted ${keptAsIs[1]!.key} (login ${keptAsIs[1]!.login}): missing`);
    expect(drifted.output).toContain('1 drifted now, 7 unchanged');
  }, 420_000);
});

/** The fixture's record store, as its configuration names it. */
function storeEndpoint(f: EngineFixture) {
  const url = new URL(f.config.store.url);
  return { ...f.provider, host: url.hostname, port: Number(url.port), url: f.config.store.url };
}

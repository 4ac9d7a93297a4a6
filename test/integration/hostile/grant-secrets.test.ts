/**
 * Grant-secret files written to harm (issue 13, item 5, and secrets across providers): a FIFO,
 * a device, a symlink out of the grants folder or to another consumer's secret, a hard link, a
 * folder swapped for a directory symlink out of the roots, a path into another provider's
 * directory. Each consumer is blocked (or refused) with its reason, said once; the other
 * consumers of the same provider and of another are created, and healed after the cache
 * restarts; the status answers promptly throughout. `holdfast doctor` names a FIFO and finishes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { bundleForAnyUser } from '../../support/bundle-for-any-user.js';
import { EngineFixture, engineFixtures, readable, type Consumer } from '../engine/engine-fixture.js';
import type { StatusReport } from '../../../src/status/status-report.js';

const VERIFY_MS = 2_000;
/** Long enough on a loaded machine that only a hang misses it. */
const PROMPT_MS = 15_000;

/** The status, or a failure when it takes longer than {@link PROMPT_MS}: a read that held the event loop would. */
async function promptStatus(f: EngineFixture, slowest: { ms: number }): Promise<StatusReport> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`the status did not answer within ${PROMPT_MS} ms`)), PROMPT_MS)),
  );
  try {
    return await Promise.race([f.status(), late]);
  } finally {
    clearTimeout(timer);
    slowest.ms = Math.max(slowest.ms, Date.now() - start);
  }
}

/** A device node where `path` is (/dev/zero's numbers), or why not. */
function makeDevice(path: string): string | undefined {
  rmSync(path, { force: true });
  const made = spawnSync('mknod', [path, 'c', '1', '5'], { encoding: 'utf8' });
  return made.status === 0 ? undefined : `mknod failed: ${made.stderr.trim() || made.error?.message}`;
}

describe('grant secrets written to harm', () => {
  const fixture = engineFixtures();

  it("blocks a FIFO, a device, symlinks and a hard link, refuses another provider's file, and serves, heals and answers for the rest", async () => {
    const cache = await ownBackend('redis');
    const f = await fixture({
      provider: cache,
      consumers: 10,
      timing: { verifyEvery: `${VERIFY_MS}ms`, checkTimeout: '1s', retryBase: '200ms' },
      ledger: { adapterKind: 'postgres-roles', consumers: 2 },
    });
    const [fifo, outLink, inLink, hardLink, device, foreign, fine, target, shared, inFolder] = f.consumers as [
      Consumer,
      Consumer,
      Consumer,
      Consumer,
      Consumer,
      Consumer,
      Consumer,
      Consumer,
      Consumer,
      Consumer,
    ];
    const [ledgerBilling] = f.ledgerConsumers as [Consumer];
    const slowest = { ms: 0 };
    const stateOf = async (c: Consumer) => (await promptStatus(f, slowest)).consumers.find((s) => s.consumer === c.key);

    // one consumer names the ledger's grant file; one a file beside the contributions, a directory of both providers
    // and one keeps its grant secret in a folder of its own (replaced by a directory symlink below)
    const secretOf = new Map([
      [foreign.id, `../grants-ledger/${ledgerBilling.id}.secret`],
      [shared.id, `${shared.id}.secret`],
      [inFolder.id, `../grants/${inFolder.id}/grant.secret`],
    ]);
    writeFileSync(join(f.dir, 'contributions', `${shared.id}.secret`), `${shared.password}\n`, { mode: 0o600 });
    const folder = join(f.dir, 'grants', inFolder.id);
    mkdirSync(folder);
    renameSync(inFolder.secretPath, join(folder, 'grant.secret'));
    inFolder.secretPath = join(folder, 'grant.secret');
    const items = f.consumers.map(
      (c) =>
        `  - { id: ${c.id}, login: ${c.login}, secret: ${secretOf.get(c.id) ?? `../grants/${c.id}.secret`}, values: { keys: ["${c.id}:*"], commands: ["+@read", "+@write", "+@connection"] } }`,
    );
    writeFileSync(join(f.dir, 'contributions/cache.yaml.new'), `consumers:\n${items.join('\n')}\n`);
    renameSync(join(f.dir, 'contributions/cache.yaml.new'), join(f.dir, 'contributions/cache.yaml'));

    // from the start: a FIFO (no writer: an open without O_NONBLOCK would wait for ever), and a device
    rmSync(fifo.secretPath);
    execFileSync('mkfifo', [fifo.secretPath]);
    const noDevice = makeDevice(device.secretPath);
    if (noDevice) {
      console.log(`[grant-secrets] the device case is skipped (${noDevice})`);
      writeFileSync(device.secretPath, '\n'); // blocked all the same, as an empty secret
    }

    await f.start();
    const healthy = [outLink, inLink, hardLink, fine, target, inFolder];
    const blockedAtStart = [fifo, device];
    await f.until(
      'the others held, the FIFO and the device blocked, the misplaced refused',
      async () => {
        const states = await Promise.all([...f.consumers, ...f.ledgerConsumers].map(stateOf));
        const by = new Map(states.map((s) => [s?.consumer, s?.state]));
        return (
          [...healthy, ...f.ledgerConsumers].every((c) => by.get(c.key) === 'held') &&
          blockedAtStart.every((c) => by.get(c.key) === 'blocked') &&
          [foreign, shared].every((c) => by.get(c.key) === 'rejected')
        );
      },
      60_000,
    );
    for (const c of healthy) expect(await f.canLogin(c)).toBe(true);
    for (const c of f.ledgerConsumers) expect(await f.canLoginToLedger(c)).toBe(true);
    expect((await stateOf(fifo))!.reason).toContain(
      `grant secret ${fifo.secretPath} is a FIFO (named pipe), not a regular file; nothing was read from it`,
    );
    if (!noDevice)
      expect((await stateOf(device))!.reason).toContain(
        `grant secret ${device.secretPath} is a character device, not a regular file`,
      );
    expect((await stateOf(foreign))!.reason).toContain(
      `"../grants-ledger/${ledgerBilling.id}.secret" is in ${join(f.dir, 'grants-ledger')}, provider ledger's secretsRoot: no grant secret of one provider may be in another's directory`,
    );
    expect((await stateOf(shared))!.reason).toContain(
      `"${shared.id}.secret" is in ${join(f.dir, 'contributions')}, provider ledger's contributions file's directory: no grant secret of one provider may be in another's directory`,
    );
    // the ledger's password never reached the cache, not even as a hash
    const admin = new Redis({
      host: cache.host,
      port: cache.port,
      username: cache.admin.username,
      password: cache.admin.password,
      lazyConnect: true,
    });
    await admin.connect();
    try {
      expect(await admin.call('ACL', 'GETUSER', foreign.login)).toBeNull();
      expect(await admin.call('ACL', 'GETUSER', shared.login)).toBeNull();
    } finally {
      admin.disconnect();
    }

    // accepted secrets replaced: by a symlink out of the roots, by one to another consumer's secret, by a hard link,
    // and a folder by a directory symlink out of the roots
    const outside = join(f.dir, 'outside');
    mkdirSync(outside);
    const planted = { password: 'a-password-planted-outside' };
    writeFileSync(join(outside, 'out.secret'), `${planted.password}\n`);
    writeFileSync(join(outside, 'hard.secret'), `${planted.password}\n`);
    writeFileSync(join(outside, 'grant.secret'), `${planted.password}\n`);
    rmSync(folder, { recursive: true });
    symlinkSync(outside, folder);
    rmSync(outLink.secretPath);
    symlinkSync(join(outside, 'out.secret'), outLink.secretPath);
    rmSync(inLink.secretPath);
    symlinkSync(target.secretPath, inLink.secretPath);
    rmSync(hardLink.secretPath);
    linkSync(join(outside, 'hard.secret'), hardLink.secretPath);
    const reasons = new Map([
      [fifo.key, `${fifo.secretPath} is a FIFO (named pipe), not a regular file`],
      [
        device.key,
        noDevice ? `${device.secretPath} is empty` : `${device.secretPath} is a character device, not a regular file`,
      ],
      [
        outLink.key,
        `${outLink.secretPath} is a symbolic link (to ${join(outside, 'out.secret')}); a grant secret is a regular file, not a link to one`,
      ],
      [
        inLink.key,
        `${inLink.secretPath} is a symbolic link (to ${target.secretPath}); a grant secret is a regular file, not a link to one`,
      ],
      [
        hardLink.key,
        `${hardLink.secretPath} has 2 names (hard links); a grant secret has one, or another consumer's secret could be read through it`,
      ],
      [
        inFolder.key,
        `${inFolder.secretPath} is really ${join(outside, 'grant.secret')}, outside the contributions file's directory or the provider's secretsRoot (${join(f.dir, 'grants')}); nothing was read from it`,
      ],
    ]);
    const bad = [fifo, device, outLink, inLink, hardLink, inFolder];
    await f.until(
      'the replaced secrets blocked, each with its reason',
      async () => {
        const states = await Promise.all(bad.map(stateOf));
        return states.every((s) => s?.state === 'blocked' && s.reason?.includes(reasons.get(s.consumer)!));
      },
      30_000,
    );

    // the cache restarts without an ACL file: the others heal within the interval (a loaded machine: a few)
    await cache.restart();
    expect(await f.canLogin(fine)).toBe(false);
    const healMs = await f.until(
      'every healthy cache consumer logs in again',
      async () => (await Promise.all(healthy.filter((c) => !bad.includes(c)).map((c) => f.canLogin(c)))).every(Boolean),
      5 * VERIFY_MS,
    );
    console.log(
      `[grant-secrets] healed ${healMs} ms after the cache restarted (verifyEvery ${VERIFY_MS} ms); the slowest status took ${slowest.ms} ms`,
    );
    for (const c of f.ledgerConsumers) expect(await f.canLoginToLedger(c)).toBe(true);

    // blocked over several intervals: said once each, nothing read from the files
    const engine = f.engines[0]!;
    await f.until(
      'each blocked consumer refused again and again',
      async () => {
        const records = (await Promise.all(bad.map((c) => engine.store.get(c.key)))).map(readable);
        return records.every((r) => (r?.machine.context.blockedRepeats ?? 0) >= 3);
      },
      60_000,
    );
    for (const c of bad) {
      const shown = (await stateOf(c))!;
      expect(shown.state).toBe('blocked');
      expect(shown.reason).toContain(reasons.get(c.key));
      const errors = f.logsFor(c).filter((l) => l.level >= 50);
      expect(errors.map((l) => l.msg)).toEqual([
        expect.stringContaining(`grant secret is no usable password: grant secret ${reasons.get(c.key)}`),
      ]);
    }
    for (const c of [outLink, hardLink, inFolder])
      expect(await f.canLogin({ ...c, password: planted.password })).toBe(false);
    expect(await f.canLogin({ ...inLink, password: target.password })).toBe(false);
    for (const line of f.rawLog) expect(line).not.toContain(planted.password);
    expect(statSync(fifo.secretPath).isFIFO()).toBe(true);

    // regular files again: served, said once
    rmSync(folder);
    mkdirSync(folder);
    for (const c of bad) {
      rmSync(c.secretPath, { force: true });
      writeFileSync(c.secretPath, `${c.password}\n`, { mode: 0o600 });
    }
    await f.until(
      'the blocked held again',
      async () => (await Promise.all(bad.map(stateOf))).every((s) => s?.state === 'held'),
      30_000,
    );
    for (const c of bad) expect(await f.canLogin(c)).toBe(true);
    expect((await stateOf(foreign))!.state).toBe('rejected');
  }, 240_000);
});

/** Everything under `dir` readable by anyone (what a deployment for another user would look like). */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const s = statSync(path);
    if (s.isDirectory()) openUp(path);
    else if (s.isFile()) chmodSync(path, 0o644);
  }
}

describe('holdfast doctor and a FIFO', () => {
  let fixture: EngineFixture | undefined;
  let bundle: string | undefined;
  afterAll(async () => {
    await fixture?.stop();
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it.runIf(process.getuid?.() === 0)(
    'finishes and names the FIFO, run as nobody',
    async () => {
      fixture = await EngineFixture.create({ consumers: 2 });
      const f = fixture;
      const [pipe, fine] = f.consumers as [Consumer, Consumer];
      rmSync(pipe.secretPath);
      execFileSync('mkfifo', ['-m', '0644', pipe.secretPath]);
      openUp(f.dir);
      const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
      const cli = (bundle = await bundleForAnyUser('src/cli/main.ts'));
      // a doctor that waits on the FIFO is killed here, and fails below
      const run = spawnSync(process.execPath, [cli, 'doctor', '-c', join(f.dir, 'holdfast.yaml')], {
        encoding: 'utf8',
        cwd: dirname(cli),
        uid: nobody,
        gid: nobody,
        timeout: 60_000,
      });
      expect(run.signal).toBeNull();
      expect(run.stderr).toBe('');
      expect(run.stdout.split('\n').filter(Boolean)).toEqual([
        `holdfast doctor: grant secret of ${pipe.key}: grant secret ${pipe.secretPath} is a FIFO (named pipe), not a regular file; nothing was read from it; write its password (8 to 4096 bytes of UTF-8 text on one line) to a regular file of its own, in its provider's directories`,
        `holdfast doctor: 1 problem (as uid ${nobody})`,
      ]);
      expect(run.status).toBe(1);
      expect(readFileSync(fine.secretPath, 'utf8')).toBe(`${fine.password}\n`);
    },
    120_000,
  );
});

/**
 * The object store's case (issue 14's "no churn, measured"): N `s3-identities` consumers on a
 * real SeaweedFS, applied from nothing by `holdfast run`, then a window of routine checks. The
 * server's own metrics count what happened: its identity writes (every `CreateAccessKey`,
 * `CreateUser`, `PutUserPolicy`… writes the filer's store; a check writes nothing), its
 * requests by type (a light check is one signed `ListBuckets`, a deep one four IAM reads and
 * one `ListBuckets`), their handling time and the server's CPU. The filer's own change log, which
 * it writes to `/topics/.system/log/` about once a minute, is counted apart (see {@link filerLog}).
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { s3Login } from '../backends/logins.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { createRunDir, instanceDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';
import { EngineProcess } from './engine-process.js';

/** IAM reads in one deep check: ListUserTags, ListAccessKeys, ListUserPolicies, GetUserPolicy. */
const IAM_PER_DEEP = 4;

interface ServerCounters {
  identityWrites: number;
  listRequests: number;
  iamRequests: number;
  requestSeconds: number;
  cpuSeconds: number;
}

export interface ObjectStoreResult {
  consumers: number;
  verifyEvery: string;
  deepCheckEvery: string;
  /** From the start of `holdfast run` until every consumer's signed request works. */
  firstApplyMs: number;
  /** The server's identity writes while the consumers were first applied (its change log's writes not counted). */
  firstApplyIdentityWrites: number;
  windowSeconds: number;
  lightChecks: number;
  deepChecks: number;
  /** `CreateAccessKey` requests holdfast sent during the routine checks (its adapter's count). */
  createAccessKeyDuringChecks: number;
  /**
   * The server's store writes during the routine checks (its metrics) less its change log's: any IAM change, a
   * `CreateAccessKey` among them.
   */
  identityWritesDuringChecks: number;
  /** The filer's writes of its own change log during the checks (a flush of the changes before them: the applies'). */
  changeLogWritesDuringChecks: number;
  serverRequestUsPerCheck: number;
  serverCpuMsPer1kChecks: number;
  holdfastCpuMsPer1kChecks: number;
}

async function counters(s3: OwnedBackend): Promise<ServerCounters> {
  const text = await (await fetch(s3.metricsUrl!)).text();
  const sum = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((n, m) => n + Number(m[1]), 0);
  return {
    identityWrites: sum(/^SeaweedFS_filerStore_request_total\{[^}]*type="(?:insert|update|delete)"[^}]*\} (\S+)$/gm),
    listRequests: sum(/^SeaweedFS_s3_request_seconds_count\{[^}]*type="LIST"[^}]*\} (\S+)$/gm),
    iamRequests: sum(/^SeaweedFS_s3_request_seconds_count\{[^}]*type="IAM-Unified"[^}]*\} (\S+)$/gm),
    requestSeconds: sum(/^SeaweedFS_s3_request_seconds_sum\{[^}]*type="(?:LIST|IAM-Unified)"[^}]*\} (\S+)$/gm),
    cpuSeconds: sum(/^process_cpu_seconds_total (\S+)$/gm),
  };
}

/**
 * The filer's change log: SeaweedFS keeps each metadata change (every identity write among them)
 * in memory and writes them to `/topics/.system/log/<day>/<minute>.<filer>` about a minute later,
 * one store write per flush (a new file is inserted, an existing one updated) and an insert per
 * new directory. Those writes are counted by `SeaweedFS_filerStore_request_total` too, so a
 * routine window began up to a minute after the applies counted the flush of their changes
 * (1 write in 7 of the 12 quick benches on 2026-12-01 that counted it; a holdfast check makes
 * no metadata change at all, by `weed filer.meta.tail`). Each entry below `/topics`, and its mtime.
 */
async function filerLog(
  filerUrl: string,
  dir = '/topics/',
  into = new Map<string, string>(),
): Promise<Map<string, string>> {
  for (let last = ''; ;) {
    const res = await fetch(`${filerUrl}${dir}?limit=1000&lastFileName=${encodeURIComponent(last)}`, {
      headers: { Accept: 'application/json' },
    });
    if (res.status === 404) return into;
    const page = (await res.json()) as {
      Entries: { FullPath: string; Mtime: string; Mode: number }[] | null;
      ShouldDisplayLoadMore: boolean;
      LastFileName: string;
    };
    for (const entry of page.Entries ?? []) {
      into.set(entry.FullPath, entry.Mtime);
      // a directory's mode has Go's os.ModeDir bit
      if ((entry.Mode & 0x80000000) !== 0) await filerLog(filerUrl, `${entry.FullPath}/`, into);
    }
    if (!page.ShouldDisplayLoadMore) return into;
    last = page.LastFileName;
  }
}

/** The change log's writes from one listing to the next: entries made, and entries whose mtime moved. */
function changeLogWrites(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): number {
  return [...after].filter(([path, mtime]) => before.get(path) !== mtime).length;
}

/** The server's counters and its change log, read with no flush between them (the log listed before and after). */
async function reading(s3: OwnedBackend): Promise<ServerCounters & { log: Map<string, string> }> {
  for (;;) {
    const log = await filerLog(s3.filerUrl!);
    const now = await counters(s3);
    if (changeLogWrites(log, await filerLog(s3.filerUrl!)) === 0) return { ...now, log };
  }
}

/**
 * SeaweedFS rewrites its whole identity configuration at every IAM write (measured: a
 * CreateUser and CreateAccessKey pair took 30 ms at 50 identities, 240 ms at 300), so the first
 * applies get a deadline that covers them; the checks, reads only, get a short interval.
 */
const APPLY_TIMING = { verifyEvery: '30s', checkTimeout: '30s' };
const CHECK_TIMING = { verifyEvery: '2s', checkTimeout: '2s', deepCheckEvery: '20s' };

/** The grant secrets and the contributions of `n` consumers, and the admin secrets. */
function writeWorld(
  dir: string,
  s3: OwnedBackend,
  queue: OwnedBackend,
  store: OwnedBackend,
  n: number,
): { secrets: string[] } {
  for (const sub of ['grants', 'secrets', 'contributions']) mkdirSync(join(dir, sub), { mode: 0o755 });
  const secrets = Array.from({ length: n }, () => randomBytes(18).toString('base64url'));
  const ids = secrets.map((_, i) => `c${String(i).padStart(6, '0')}`);
  ids.forEach((id, i) => writeFileSync(join(dir, 'grants', `${id}.secret`), `${secrets[i]}\n`, { mode: 0o600 }));
  const items = ids.map(
    (id) => `  - { id: ${id}, login: hf_${id}, secret: ../grants/${id}.secret, values: { buckets: ["${id}-data"] } }`,
  );
  writeFileSync(join(dir, 'contributions/assets.yaml'), `consumers:\n${items.join('\n')}\n`);
  writeFileSync(join(dir, 'secrets/queue'), queue.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/store'), store.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/assets'), s3.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/fingerprint.key'), randomBytes(32), { mode: 0o600 });
  return { secrets };
}

/** `holdfast-<name>.yaml` with these timing defaults; both configurations share queue, store and records. */
function writeConfig(
  dir: string,
  name: string,
  s3: OwnedBackend,
  queue: OwnedBackend,
  store: OwnedBackend,
  timing: Record<string, string>,
): string {
  const config = join(dir, `holdfast-${name}.yaml`);
  writeFileSync(
    config,
    [
      `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
      `store: { url: "mongodb://${store.host}:${store.port}/?authSource=admin", username: ${store.admin.username}, passwordFile: secrets/store }`,
      'fingerprintKeyFile: secrets/fingerprint.key',
      'worker: { concurrency: 32 }',
      'log: { level: warn, format: json }',
      `defaults: { ${Object.entries(timing)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')} }`,
      'providers:',
      '  - name: assets',
      '    adapter: s3-identities',
      `    admin: { url: "http://${s3.host}:${s3.port}", username: ${s3.admin.username}, passwordFile: secrets/assets }`,
      '    contributions: contributions/assets.yaml',
      '    secretsRoot: grants',
    ].join('\n') + '\n',
  );
  return config;
}

/** Runs the case for `n` consumers with a `windowMs` window of routine checks. */
export async function objectStore(n: number, windowMs: number): Promise<ObjectStoreResult> {
  const settings = readSettings();
  const run = createRunDir(settings.tmpRoot);
  const servers: OwnedBackend[] = [];
  try {
    const docker = await useDocker(settings);
    const [s3, queue, store] = await Promise.all([
      startOwned('s3', run, settings, docker),
      startOwned('redis', run, settings, docker),
      startOwned('mongodb', run, settings, docker),
    ]);
    servers.push(s3, queue, store);
    if (s3.metricsUrl === undefined || s3.filerUrl === undefined)
      throw new Error(
        'the object-store case needs a SeaweedFS the harness started itself (its metrics and filer ports)',
      );
    // SeaweedFS rewrites its whole identity configuration at every IAM write (about 0.8 ms per identity it holds,
    // measured): applies get time
    const dir = instanceDir(run, 'bench-s3');
    const world = writeWorld(dir, s3, queue, store, n);
    const applyConfig = writeConfig(dir, 'apply', s3, queue, store, APPLY_TIMING);
    const checkConfig = writeConfig(dir, 'check', s3, queue, store, CHECK_TIMING);
    const start = await reading(s3);
    const started = Date.now();
    // the first applies, with a deadline that covers SeaweedFS's identity writes
    const applier = await EngineProcess.start(applyConfig, 'run', join(dir, 'engine-apply.log'));
    try {
      await allSign(s3, world.secrets).catch((error: Error) => {
        throw new Error(
          `${error.message}; the engine's log ends:\n${readFileSync(join(dir, 'engine-apply.log'), 'utf8').split('\n').slice(-8).join('\n')}`,
        );
      });
      // a key signs before its policy is put: the applies are over when the server's writes stop
      await writesStop(s3);
    } finally {
      await applier.stop();
    }
    const firstApplyMs = Date.now() - started;
    const applied = await reading(s3);
    // then routine checks at a short interval, by a new `holdfast run` on the same records
    const engine = await EngineProcess.start(checkConfig, 'run', join(dir, 'engine-check.log'));
    try {
      // the waits the first engine scheduled (verifyEvery 30 s) end, and the checks then come every 2 s
      await new Promise((r) => setTimeout(r, 35_000));
      const [before, statsBefore] = [await reading(s3), await engine.fresh()];
      await new Promise((r) => setTimeout(r, windowMs));
      const [after, statsAfter] = [await reading(s3), await engine.fresh()];
      const deep = (after.iamRequests - before.iamRequests) / IAM_PER_DEEP;
      const light = after.listRequests - before.listRequests - deep;
      const checks = Math.max(light + deep, 1);
      const changeLog = changeLogWrites(before.log, after.log);
      return {
        consumers: n,
        verifyEvery: CHECK_TIMING.verifyEvery,
        deepCheckEvery: CHECK_TIMING.deepCheckEvery,
        firstApplyMs,
        firstApplyIdentityWrites:
          applied.identityWrites - start.identityWrites - changeLogWrites(start.log, applied.log),
        windowSeconds: (statsAfter.at - statsBefore.at) / 1000,
        lightChecks: Math.round(light),
        deepChecks: Math.round(deep),
        createAccessKeyDuringChecks: statsAfter.createAccessKeys - statsBefore.createAccessKeys,
        identityWritesDuringChecks: after.identityWrites - before.identityWrites - changeLog,
        changeLogWritesDuringChecks: changeLog,
        serverRequestUsPerCheck: ((after.requestSeconds - before.requestSeconds) * 1e6) / checks,
        serverCpuMsPer1kChecks: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / checks,
        holdfastCpuMsPer1kChecks: (statsAfter.cpuUs - statsBefore.cpuUs) / checks,
      };
    } finally {
      await engine.stop();
      // kept beside the results: what the engine said (warnings and errors) during the checks
      // (bench/results/ is made here in a fresh checkout: a failed copy must not hide the case's own error)
      const results = join(import.meta.dirname, '../../bench/results');
      mkdirSync(results, { recursive: true });
      if (existsSync(join(dir, 'engine-check.log')))
        copyFileSync(join(dir, 'engine-check.log'), join(results, 'object-store-engine.log'));
    }
  } finally {
    await Promise.allSettled(servers.map((s) => s.stop()));
    await reapRunDir(run);
  }
}

/** Waits until two readings of the server's identity writes, 3 s apart, are the same. */
async function writesStop(s3: OwnedBackend): Promise<void> {
  let last = (await counters(s3)).identityWrites;
  for (;;) {
    await new Promise((r) => setTimeout(r, 3_000));
    const now = (await counters(s3)).identityWrites;
    if (now === last) return;
    last = now;
  }
}

/** Waits until every consumer's request, signed with its key and grant secret, is accepted. */
async function allSign(s3: OwnedBackend, secrets: readonly string[]): Promise<void> {
  const ids = secrets.map((_, i) => `c${String(i).padStart(6, '0')}`);
  let waiting = ids.map((id, i) => ({ login: `hf_${id}`, secret: secrets[i]! }));
  for (const begun = Date.now(); Date.now() - begun < 300_000;) {
    const ok = await Promise.all(waiting.map((c) => s3Login(s3, 'assets', c.login, c.secret).catch(() => false)));
    waiting = waiting.filter((_, i) => !ok[i]);
    if (waiting.length === 0) return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(`${waiting.length} of the object store's consumers were not applied within 5 minutes`);
}

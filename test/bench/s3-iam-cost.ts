/**
 * `npx tsx test/bench/s3-iam-cost.ts [--identities 1000]`: what each IAM request costs a SeaweedFS holding N identities,
 * and whether sending them at once helps. N users are made with `CreateUser` (the one write that writes one file),
 * then each request an `s3-identities` apply or check sends is timed on one more identity, with the server's CPU
 * (`process_cpu_seconds_total`) from the request until its gateway has reloaded what the write changed (a quiet
 * `--drain` after it, the server's idle CPU over as long taken off). Then eight `TagUser`s one after another and four at
 * a time. Ends with one line of JSON.
 */
import { loadavg } from 'node:os';
import { S3Requests } from '../../src/adapters/s3-identities/s3-requests.js';
import { parseDuration } from '../../src/config/duration.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { createRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const identities = Number(arg('identities', '1000'));
const drainMs = parseDuration(arg('drain', '3s'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg()[0]!.toFixed(2);

const settings = readSettings();
const s3 = await startOwned('s3', createRunDir(settings.tmpRoot), settings, await useDocker(settings));
const requests = new S3Requests(`http://${s3.host}:${s3.port}`);
const admin = { accessKeyId: s3.admin.username, secretAccessKey: s3.admin.password };
const iam = (action: string, params: Record<string, string>) =>
  requests.iam(admin, action, params, AbortSignal.timeout(600_000));
const serverCpuMs = async () => {
  const text = await (await fetch(s3.metricsUrl!)).text();
  return 1000 * Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? NaN);
};

/** Wall ms of `work`, and the server's CPU ms for it and its reloads (idle CPU over the drain taken off). */
async function cost(work: () => Promise<unknown>): Promise<{ ms: number; serverCpuMs: number }> {
  const idle0 = await serverCpuMs();
  await sleep(drainMs);
  const idle = (await serverCpuMs()) - idle0;
  const before = await serverCpuMs();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  await sleep(drainMs);
  return { ms: Math.round(ms * 10) / 10, serverCpuMs: Math.round((await serverCpuMs()) - before - idle) };
}

const user = 'probe';
const document = JSON.stringify({
  Version: '2012-10-17',
  Statement: [
    { Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::probe-a', 'arn:aws:s3:::probe-a/*'] },
  ],
});
const tag = (name: string, value: string) =>
  iam('TagUser', { UserName: name, 'Tags.member.1.Key': 'holdfast-managed', 'Tags.member.1.Value': value });
const steps: Array<[string, () => Promise<unknown>]> = [
  ['CreateUser', () => iam('CreateUser', { UserName: user })],
  ['TagUser', () => tag(user, 'bench')],
  [
    'CreateAccessKey',
    () =>
      iam('CreateAccessKey', {
        UserName: user,
        AccessKeyId: 'HFPROBE0000000000000000000000001',
        SecretAccessKey: 'probe-secret-1',
      }),
  ],
  [
    'PutUserPolicy',
    () => iam('PutUserPolicy', { UserName: user, PolicyName: 'holdfast-grant', PolicyDocument: document }),
  ],
  ['ListUserTags', () => iam('ListUserTags', { UserName: user })],
  ['ListAccessKeys', () => iam('ListAccessKeys', { UserName: user })],
  ['ListUserPolicies', () => iam('ListUserPolicies', { UserName: user })],
  ['GetUserPolicy', () => iam('GetUserPolicy', { UserName: user, PolicyName: 'holdfast-grant' })],
];

try {
  const began = Date.now();
  for (let i = 0; i < identities; i++) await iam('CreateUser', { UserName: `u${i}` });
  process.stdout.write(`${identities} users made with CreateUser in ${Date.now() - began} ms; load ${load()}\n`);
  const result: Record<string, unknown> = { identities, loadStart: load() };
  for (const [action, work] of steps) {
    const c = await cost(work);
    result[action] = c;
    process.stdout.write(`  ${action}: ${c.ms} ms, server CPU ${c.serverCpuMs} ms; load ${load()}\n`);
  }
  const oneByOne = await cost(async () => {
    for (let i = 0; i < 8; i++) await tag(`u${i}`, 'one');
  });
  const fourAtOnce = await cost(async () => {
    for (let i = 8; i < 16; i += 4) await Promise.all([0, 1, 2, 3].map((k) => tag(`u${i + k}`, 'four')));
  });
  process.stdout.write(`  8 TagUser one after another: ${oneByOne.ms} ms, server CPU ${oneByOne.serverCpuMs} ms\n`);
  process.stdout.write(`  8 TagUser four at a time: ${fourAtOnce.ms} ms, server CPU ${fourAtOnce.serverCpuMs} ms\n`);
  process.stdout.write(`${JSON.stringify({ ...result, oneByOne, fourAtOnce, loadEnd: load() })}\n`);
} finally {
  await s3.stop();
}

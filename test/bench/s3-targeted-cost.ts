/**
 * `npx tsx test/bench/s3-targeted-cost.ts [--identities 100,1000] [--parallel 8] [--one-write]`: the prototype of issue 42's
 * SeaweedFS design question. Through the IAM API on the S3 port every write but `CreateUser` makes SeaweedFS save its
 * whole identity configuration (`ExecuteAction`'s `changed` → `SaveConfiguration`: every identity's file written again,
 * s3-iam-cost.ts); SeaweedFS 4.x also serves its credential manager over gRPC on the filer's gRPC port
 * (`iam_pb.SeaweedIdentityAccessManagement`, weed/server/filer_server_handlers_iam_grpc.go), whose `CreateUser` takes a
 * whole identity (tags, an access key with its secret, attached policy names) and writes one file
 * (filer_etc `saveIdentity`), and whose `PutPolicy` writes one managed policy's file.
 *
 * For each N, on a SeaweedFS started empty: N identities made from nothing as a consumer's would be (one `CreateUser`
 * and one managed policy each, `--parallel` at once), then how long until the last signs through the S3 gateway and every
 * one does, with the server's CPU (`process_cpu_seconds_total`); then, at N, one more identity made that way against
 * one `TagUser` through the IAM API, each timed until the gateway has taken it. `--one-write` puts the rights in the
 * identity itself (its actions, `Read:<bucket>`…) instead of a managed policy: one file per identity. Ends with one
 * line of JSON.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:http2';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessKeyIdOf, policyDocument } from '../../src/adapters/s3-identities/identity.js';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { S3ErrorReply, S3Requests, type Credentials } from '../../src/adapters/s3-identities/s3-requests.js';
import { freePorts } from '../backends/ports.js';
import { newS3Admin, probeS3, seaweedFsRecipe } from '../backends/seaweedfs.js';
import { childEnvironment, readSettings } from '../backends/settings.js';
import { inParallel } from './seed.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const sizes = arg('identities', '100,1000').split(',').map(Number);
const parallel = Number(arg('parallel', '8'));
/** `--one-write`: the rights as the identity's own actions (`Read:<bucket>`…), no managed policy: one file each. */
const oneWrite = process.argv.includes('--one-write');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg()[0]!.toFixed(2);
const PROVIDER = 'bench';

/** Protocol buffers, the little the requests here need: strings and nested messages (wire type 2). */
function field(n: number, value: string | Uint8Array): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
  const varint = (v: number) => {
    const out: number[] = [];
    while (v > 0x7f) {
      out.push((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.push(v);
    return out;
  };
  return Buffer.concat([Buffer.from(varint((n << 3) | 2)), Buffer.from(varint(bytes.length)), bytes]);
}

/** One unary gRPC call of `iam_pb.SeaweedIdentityAccessManagement`; rejects with the grpc-status it ends with. */
function grpcCall(session: ReturnType<typeof connect>, method: string, message: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    const stream = session.request({
      ':method': 'POST',
      ':path': `/iam_pb.SeaweedIdentityAccessManagement/${method}`,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    let why = '';
    const note = (headers: Record<string, string | string[] | number | undefined>) => {
      const [code, message] = [headers['grpc-status'], headers['grpc-message']];
      if (code !== undefined) status = String(code);
      if (typeof message === 'string') why = decodeURIComponent(message);
    };
    stream.on('response', note);
    stream.on('trailers', note);
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', reject);
    stream.on('end', () => {
      if (status === '0') resolve(Buffer.concat(chunks).subarray(5));
      else reject(new Error(`${method}: grpc-status ${status ?? '(none)'} ${why}`));
    });
    stream.end(frame);
  });
}

interface Server {
  s3: string;
  filerGrpc: string;
  metrics: string;
  admin: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

/** `weed server` as the test backends start it (test/backends/seaweedfs.ts), on a fresh directory. */
async function startSeaweed(): Promise<Server> {
  const settings = readSettings();
  const dir = mkdtempSync(join(tmpdir(), 'hf-s3-targeted-'));
  const [port, ...ports] = await freePorts(9);
  const admin = newS3Admin();
  const recipe = seaweedFsRecipe(settings.binaries.weed, '4.48');
  recipe.prepare?.(dir, admin.password, true);
  const spec = recipe.spec(dir, port!, admin.password, { username: admin.username, ports });
  const child = spawn(spec.command, spec.args, { env: childEnvironment(spec.env ?? {}), stdio: 'ignore' });
  const until = Date.now() + 90_000;
  for (;;) {
    try {
      await probeS3('127.0.0.1', port!, 2000);
      break;
    } catch (error) {
      if (Date.now() > until || child.exitCode !== null) throw error;
      await sleep(250);
    }
  }
  return {
    s3: `http://127.0.0.1:${port}`,
    filerGrpc: `http://127.0.0.1:${ports[5]}`,
    metrics: `http://127.0.0.1:${ports[7]}/metrics`,
    admin: { accessKeyId: admin.username, secretAccessKey: admin.password },
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(3000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const login = (i: number) => `u${i}`;
const secret = (i: number) => `bench-secret-${i}-0123456789`;
const policyName = (i: number) => `holdfast-${PROVIDER}-${login(i)}`;

/**
 * The identity carrying its mark, its key and its policy's name (refused whole when the name is taken), then that
 * managed policy: two one-file writes.
 */
async function makeTargeted(session: ReturnType<typeof connect>, i: number): Promise<void> {
  const credential = Buffer.concat([
    field(1, accessKeyIdOf(PROVIDER, login(i))),
    field(2, secret(i)),
    field(3, 'Active'),
  ]);
  const tag = Buffer.concat([field(1, 'holdfast-managed'), field(2, PROVIDER)]);
  const bucket = `${login(i)}-data`;
  const rights = oneWrite
    ? ['Read', 'Write', 'List'].map((a) => field(3, `${a}:${bucket}`))
    : [field(7, policyName(i))];
  const identity = Buffer.concat([field(1, login(i)), field(2, credential), ...rights, field(9, tag)]);
  await grpcCall(session, 'CreateUser', field(1, identity));
  if (oneWrite) return;
  const document = policyDocument({ buckets: [bucket], actions: ['Read', 'Write', 'List'] })!;
  await grpcCall(session, 'PutPolicy', Buffer.concat([field(1, policyName(i)), field(2, JSON.stringify(document))]));
}

async function signs(server: Server, i: number): Promise<boolean> {
  try {
    await new S3Requests(server.s3).listBuckets(
      { accessKeyId: accessKeyIdOf(PROVIDER, login(i)), secretAccessKey: secret(i) },
      AbortSignal.timeout(30_000),
    );
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply && ['InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(error.code))
      return false;
    throw error;
  }
}

/** Resolves when `i` signs; the ms from `since`. */
async function untilSigns(server: Server, i: number, since: number): Promise<number> {
  while (!(await signs(server, i))) {
    if (performance.now() - since > 600_000) throw new Error(`${login(i)} did not sign within 600 s`);
    await sleep(20);
  }
  return Math.round(performance.now() - since);
}

const cpuMs = async (server: Server) => {
  const text = await (await fetch(server.metrics)).text();
  return Math.round(1000 * Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? NaN));
};

/** The HTTP status of `method` on `path` signed as `who` (S3). */
async function s3Status(server: Server, who: Credentials, method: string, path: string): Promise<number> {
  const url = new URL(path, server.s3);
  const signer = new SignatureV4({
    service: 's3',
    region: 'us-east-1',
    credentials: who,
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await signer.sign({
    method,
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    body: method === 'PUT' && path.split('/').length > 2 ? 'x' : undefined,
  });
  const body = method === 'PUT' && path.split('/').length > 2 ? 'x' : null;
  const response = await fetch(url, { method, headers: signed.headers, body });
  await response.text();
  return response.status;
}

/**
 * What the design must keep, asked of the server: a consumer made this way writes into its bucket and is refused
 * another's; a second `CreateUser` of an existing name is refused (`AlreadyExists`), never merged.
 */
async function rules(server: Server, session: ReturnType<typeof connect>): Promise<Record<string, unknown>> {
  const u = (i: number) => ({ accessKeyId: accessKeyIdOf(PROVIDER, login(i)), secretAccessKey: secret(i) });
  for (const i of [0, 1]) await s3Status(server, server.admin, 'PUT', `/${login(i)}-data`);
  await sleep(1000);
  const own = await s3Status(server, u(0), 'PUT', `/${login(0)}-data/object`);
  const other = await s3Status(server, u(0), 'PUT', `/${login(1)}-data/object`);
  let again = 'made';
  await makeTargeted(session, 0).catch((error: Error) => (again = error.message));
  return { ownBucketPut: own, otherBucketPut: other, createUserAgain: again };
}

async function measure(n: number): Promise<Record<string, unknown>> {
  const server = await startSeaweed();
  const session = connect(server.filerGrpc);
  try {
    const cpu0 = await cpuMs(server);
    const began = performance.now();
    await inParallel(
      Array.from({ length: n }, (_, i) => i),
      parallel,
      (i) => makeTargeted(session, i),
    );
    const writtenMs = Math.round(performance.now() - began);
    const lastSignsMs = await untilSigns(server, n - 1, began);
    let unsigned = 0;
    await inParallel(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) => {
        if (!(await signs(server, i))) unsigned += 1;
      },
    );
    const allSignMs = Math.round(performance.now() - began);
    const serverCpuMs = (await cpuMs(server)) - cpu0;
    await sleep(3000);
    // one more identity, made the targeted way, and one TagUser through the IAM API (a whole rewrite), at N
    const oneBegan = performance.now();
    const cpu1 = await cpuMs(server);
    await makeTargeted(session, n);
    const oneTargetedMs = await untilSigns(server, n, oneBegan);
    await sleep(3000);
    const oneTargetedCpuMs = (await cpuMs(server)) - cpu1;
    const cpu2 = await cpuMs(server);
    const tagBegan = performance.now();
    await new S3Requests(server.s3).iam(
      server.admin,
      'TagUser',
      { UserName: login(0), 'Tags.member.1.Key': 'other', 'Tags.member.1.Value': 'x' },
      AbortSignal.timeout(600_000),
    );
    const oneTagUserMs = Math.round(performance.now() - tagBegan);
    await sleep(3000);
    const oneTagUserCpuMs = (await cpuMs(server)) - cpu2;
    const kept = await rules(server, session);
    const result = {
      ...kept,
      oneWrite,
      identities: n,
      parallel,
      writtenMs,
      lastSignsMs,
      allSignMs,
      unsigned,
      serverCpuMs,
      oneTargetedMs,
      oneTargetedCpuMs,
      oneTagUserMs,
      oneTagUserCpuMs,
      load: load(),
    };
    process.stdout.write(
      `${n} identities from nothing (${oneWrite ? 'CreateUser with its actions' : 'CreateUser + PutPolicy'} over the filer's IAM gRPC, ${parallel} at once): ` +
        `written in ${writtenMs} ms, the last signing at ${lastSignsMs} ms, all ${n - unsigned} checked signing at ` +
        `${allSignMs} ms; server CPU ${serverCpuMs} ms. At ${n}: one more identity ${oneTargetedMs} ms until it signs ` +
        `(server CPU ${oneTargetedCpuMs} ms over 3 s after), one TagUser through the IAM API ${oneTagUserMs} ms ` +
        `(server CPU ${oneTagUserCpuMs} ms); load ${load()}\n` +
        `  u0 PUT into its bucket: HTTP ${String(kept['ownBucketPut'])}, into u1's: HTTP ${String(kept['otherBucketPut'])}; ` +
        `CreateUser of u0 again: ${String(kept['createUserAgain'])}\n`,
    );
    return result;
  } finally {
    session.close();
    await server.stop();
  }
}

const results: Array<Record<string, unknown>> = [];
for (const n of sizes) results.push(await measure(n));
process.stdout.write(`${JSON.stringify({ loadStart: load(), results })}\n`);

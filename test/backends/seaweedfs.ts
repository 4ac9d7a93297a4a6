/**
 * SeaweedFS (`weed server`) as the `s3` test backend: master, volume server, filer and S3
 * gateway in one process, every port a free loopback one, the admin identity from the
 * generated key pair in `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, and the IAM API writable
 * on the S3 port. Also the admin key generator and the readiness probe the container shares.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import { mkdirSync, rmSync } from 'node:fs';
import type { Recipe } from './local-recipe.js';
import type { AdminCredentials } from './types.js';

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * An admin key pair as AWS shapes them: a 20-character access key id (upper case and digits) and a 40-character secret.
 */
export function newS3Admin(): AdminCredentials {
  const id = Array.from({ length: 16 }, () => KEY_ALPHABET[randomInt(KEY_ALPHABET.length)]).join('');
  return { username: `HFAK${id}`, password: randomBytes(30).toString('base64url') };
}

/** `http://<accessKeyId>:<secretKey>@host:port`: the endpoint's `url`, admin credentials included like the others'. */
export function s3Url(host: string, port: number, admin: AdminCredentials): string {
  return `http://${encodeURIComponent(admin.username)}:${encodeURIComponent(admin.password)}@${host}:${port}`;
}

/** `weed server` flags shared by the local process and the container, after the ports. */
export const WEED_SERVER_FLAGS = [
  '-s3',
  '-s3.iam.readOnly=false',
  '-iam=false',
  // the Iceberg and Lance listeners default to fixed ports (8181, 9101) that two servers would share
  '-s3.port.iceberg=0',
  '-s3.port.lance=0',
  // a stop otherwise waits 10 s before the volume server stops
  '-volume.preStopSeconds=0',
  // every bucket is a collection that grows its own volumes (several at once): the default of 8
  // volumes is used up by a few buckets, and a PUT into the next one answers 500
  '-volume.max=200',
  '-master.volumeSizeLimitMB=64',
];

/**
 * The local recipe. `-dir` is a subdirectory of the instance directory, so a fresh start
 * removes exactly SeaweedFS's data (volumes, the filer's store, the IAM identities in it).
 * A stop is SIGTERM then SIGKILL after 3 s: the filer alone waits 15 s for its gRPC streams
 * to close, and everything it keeps is already in its files.
 */
export function seaweedFsRecipe(binary: string, versionLine: string): Recipe {
  return {
    flavor: `seaweedfs ${/\b(\d+\.\d+(?:\.\d+)?)\b/.exec(versionLine)?.[1] ?? versionLine}`,
    username: '',
    newAdmin: newS3Admin,
    extraPorts: 8,
    // about 3-12 s on a fresh directory, up to ~20 s on a kept one (the master waits for its volumes)
    readyTimeoutMs: 90_000,
    url: (port, password, username) => s3Url('127.0.0.1', port, { username, password }),
    metricsUrl: (ports) => `http://127.0.0.1:${ports[7]}/metrics`,
    filerUrl: (ports) => `http://127.0.0.1:${ports[4]}`,
    prepare: (dir, _password, fresh) => {
      if (fresh) rmSync(join(dir, 'data'), { recursive: true, force: true });
      mkdirSync(join(dir, 'data'), { recursive: true });
    },
    spec: (dir, port, password, { username, ports }) => {
      const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3Grpc, metrics] = ports.map(String);
      return {
        command: binary,
        args: [
          'server',
          `-dir=${join(dir, 'data')}`,
          '-ip=127.0.0.1',
          '-ip.bind=127.0.0.1',
          `-master.port=${master}`,
          `-master.port.grpc=${masterGrpc}`,
          `-volume.port=${volume}`,
          `-volume.port.grpc=${volumeGrpc}`,
          `-filer.port=${filer}`,
          `-filer.port.grpc=${filerGrpc}`,
          `-s3.port=${port}`,
          `-s3.port.grpc=${s3Grpc}`,
          `-metricsPort=${metrics}`,
          '-metricsIp=127.0.0.1',
          `-filer.localSocket=${join(dir, 'filer.sock')}`,
          `-s3.localSocket=${join(dir, 's3.sock')}`,
          ...WEED_SERVER_FLAGS,
        ],
        env: { AWS_ACCESS_KEY_ID: username, AWS_SECRET_ACCESS_KEY: password },
        stopTimeoutMs: 3000,
      };
    },
  };
}

/**
 * Resolves when an unsigned `GET /` on the S3 port answers with an S3 XML error (SeaweedFS
 * says `AccessDenied`): the gateway is up and enforcing signatures. A signed request as the
 * admin works from that moment on (checked by hand, and by test/integration/backends-smoke.test.ts).
 */
export function probeS3(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/', method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        if (/<Error>\s*<Code>[A-Za-z]+<\/Code>/.test(body)) resolve();
        else reject(new Error(`the S3 port answered HTTP ${res.statusCode} without an S3 error`));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

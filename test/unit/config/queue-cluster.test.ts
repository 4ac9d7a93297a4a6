/** `queue.cluster`: a Redis Cluster as the queue's Redis, and what is refused about it, naming file, line and field. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import { hasHashTag, loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { queueWhereOf } from '../../../src/queue/bull-connection.js';

const fakeKind: AdapterKind<unknown, unknown> = {
  kind: 'fake',
  valuesSchema: z.unknown(),
  policySchema: z.strictObject({}),
  violations: () => [],
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};
const adapters: ReadonlyMap<string, AdapterKind> = new Map([['fake', fakeKind]]);

const REST = `store:
  url: mongodb://127.0.0.1:27017
providers:
  - name: cache
    adapter: fake
    admin:
      url: redis://127.0.0.1:6380
    contributions: contributions/cache.yaml
`;

let dir: string;
let configPath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-cluster-'));
  configPath = join(dir, 'holdfast.yaml');
  writeFileSync(join(dir, 'queue-redis'), 'queue-secret-content\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function load(queue: string) {
  const yaml = `${queue}${REST}`;
  writeFileSync(configPath, yaml);
  return { yaml, loaded: loadConfig(configPath, { adapters, environment: { stdoutIsTTY: false } }) };
}

function lineOf(yaml: string, marker: string): number {
  return yaml.split('\n').findIndex((line) => line.includes(marker)) + 1;
}

/** The one problem line a user sees when `queue` is refused. */
async function refusal(queue: string): Promise<{ yaml: string; problems: string[] }> {
  const { yaml, loaded } = load(queue);
  const error = await loaded.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HoldfastError);
  expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
  return {
    yaml,
    problems: (error as HoldfastError).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim()),
  };
}

describe('queue.cluster', () => {
  it('names a Redis Cluster: its nodes, the shared credentials, TLS', async () => {
    const { loaded } = load(`queue:
  cluster: ["rediss://10.0.0.1:7000", "rediss://10.0.0.2"]
  username: holdfast
  passwordFile: queue-redis
  prefix: "{holdfast}"
`);
    const config = await loaded;
    expect(config.queue.connection).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
      ],
      tls: true,
      username: 'holdfast',
      password: 'queue-secret-content',
    });
    expect(config.queue.prefix).toBe('{holdfast}');
    expect(queueWhereOf(config.queue.connection)).toBe('cluster rediss://10.0.0.1:7000,rediss://10.0.0.2:6379');
  });

  it('refuses a prefix without a hash tag, on its line, saying what to write', async () => {
    const { yaml, problems } = await refusal(`queue:
  cluster: [redis://10.0.0.1:7000]
  prefix: holdfast
`);
    expect(problems).toEqual([
      `${configPath}:${lineOf(yaml, 'prefix:')}: queue.prefix: on a Redis Cluster the prefix must hold a hash tag, e.g. "{holdfast}": each script touches several keys, which must share one slot`,
    ]);
  });

  it('refuses the default prefix (no hash tag) on a cluster, at the queue', async () => {
    const { yaml, problems } = await refusal('queue:\n  cluster: [redis://10.0.0.1:7000]\n');
    expect(problems).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${configPath}:${lineOf(yaml, 'queue:')}: queue\\.prefix: on a Redis Cluster the prefix must hold a hash tag, e\\.g\\. "\\{holdfast\\}"`,
        ),
      ),
    ]);
  });

  it('refuses url and cluster together, and neither', async () => {
    const both = await refusal(
      'queue:\n  url: redis://10.0.0.1:6379\n  cluster: [redis://10.0.0.1:7000]\n  prefix: "{h}"\n',
    );
    expect(both.problems).toEqual([
      `${configPath}:${lineOf(both.yaml, 'cluster:')}: queue.cluster: give either url (one Redis) or cluster (a Redis Cluster), not both`,
    ]);
    const neither = await refusal('queue:\n  prefix: "{h}"\n');
    expect(neither.problems).toEqual([
      `${configPath}:1: queue.url: give url (one Redis) or cluster (the nodes of a Redis Cluster)`,
    ]);
  });

  it('refuses a database other than 0, a mix of TLS and not, a credential in a node URL, an empty list', async () => {
    const db = await refusal('queue:\n  cluster: [redis://10.0.0.1:7000/2]\n  prefix: "{h}"\n');
    expect(db.problems).toEqual([expect.stringContaining('queue.cluster: a Redis Cluster has only database 0')]);
    const mixed = await refusal(
      'queue:\n  cluster: [redis://10.0.0.1:7000, rediss://10.0.0.2:7000]\n  prefix: "{h}"\n',
    );
    expect(mixed.problems).toEqual([
      expect.stringContaining('queue.cluster: every node must be redis:// or every node rediss://'),
    ]);
    const secret = await refusal('queue:\n  cluster: ["redis://:pw@10.0.0.1:7000"]\n  prefix: "{h}"\n');
    expect(secret.problems).toEqual([
      expect.stringContaining('queue.cluster[0]: the URL must not carry a password: put it in passwordFile'),
    ]);
    expect(secret.problems.join('\n')).not.toContain('pw@');
    const empty = await refusal('queue:\n  cluster: []\n  prefix: "{h}"\n');
    expect(empty.problems).toEqual([expect.stringContaining('queue.cluster: list at least one node of the cluster')]);
  });
});

describe('hasHashTag', () => {
  it('follows Redis: the first { and the first } after it, with something between', () => {
    expect(['{holdfast}', 'app:{holdfast}', '{h}x', 'a{b}{c}'].map(hasHashTag)).toEqual([true, true, true, true]);
    expect(['holdfast', '{}holdfast', 'hold}{fast', '{holdfast', 'a{}{b}'].map(hasHashTag)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

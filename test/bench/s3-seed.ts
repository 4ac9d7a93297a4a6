/**
 * A bench's seed of many `s3-identities` consumers in seconds. Through SeaweedFS's IAM API every write rewrites every
 * identity the server holds (docs/scaling.md), so 1,000 identities take tens of minutes to make. Here the first
 * consumer is applied by the adapter itself; its identity file and inline policy, read back from the filer, are the
 * template every other consumer's is written from, straight into the filer beside it
 * (`/etc/iam/identities/<login>.json`, then `/etc/iam/policies.json` once), which the gateway reloads as it does any
 * change there. `seedHeld` then applies each through the adapter, which finds it held and writes nothing (an apply
 * sends only what its identity lacks): a seed that differed from what the adapter makes would be made right there,
 * slowly, not measured wrong.
 */
import type { S3IdentitiesValues } from '../../src/adapters/s3-identities/index.js';
import { accessKeyIdOf, POLICY_NAME, policyDocument } from '../../src/adapters/s3-identities/identity.js';
import { policyDifference } from '../../src/adapters/s3-identities/policy-meaning.js';
import { connectAdapter, type ProviderConfig } from '../../src/config/config.js';
import { loadContributions } from '../../src/desired/load-contributions.js';
import { s3Login } from '../backends/logins.js';
import type { OwnedBackend } from '../backends/types.js';
import type { BenchEnv } from './bench-env.js';
import { inParallel } from './seed.js';

const IAM_DIR = '/etc/iam';

interface IdentityFile {
  name: string;
  credentials: Array<{ access_key: string; secret_key: string; status: string }>;
  actions: string[];
  [field: string]: unknown;
}

async function readFiler(filer: string, path: string): Promise<string> {
  const response = await fetch(`${filer}${path}`);
  if (!response.ok) throw new Error(`the filer answered ${response.status} for ${path}`);
  return response.text();
}

async function writeFiler(filer: string, path: string, content: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([content], { type: 'application/json' }), path.slice(path.lastIndexOf('/') + 1));
  const response = await fetch(`${filer}${path}`, { method: 'POST', body: form });
  if (!response.ok) throw new Error(`the filer answered ${response.status} to a write of ${path}`);
}

/** The one bucket a bench consumer names (the template is rewritten bucket for bucket). */
function onlyBucket(login: string, values: S3IdentitiesValues): string {
  if (values.buckets.length !== 1) throw new Error(`${login}: the fast seed takes consumers of one bucket each`);
  return values.buckets[0]!;
}

/** Every consumer of `provider` made on `s3` as its adapter would make it; resolves once the gateway knows the last. */
export async function writeS3Identities(env: BenchEnv, s3: OwnedBackend, provider: ProviderConfig): Promise<void> {
  const filer = s3.filerUrl;
  if (filer === undefined) throw new Error('the fast seed writes through the filer: this SeaweedFS names none');
  const consumers = (await loadContributions(provider)).consumers;
  const passwords = new Map(env.consumers.map((c) => [c.key, c.password]));
  const grants = consumers.map(({ key, desired }) => ({
    login: desired.login,
    password: passwords.get(key)!,
    values: desired.values as S3IdentitiesValues,
  }));
  const [head, ...rest] = grants;
  if (head === undefined) return;
  const adapter = connectAdapter(provider);
  try {
    await adapter.create(head, { signal: AbortSignal.timeout(120_000) });
  } finally {
    await adapter.close();
  }
  const template = JSON.parse(await readFiler(filer, `${IAM_DIR}/identities/${head.login}.json`)) as IdentityFile;
  const policies = JSON.parse(await readFiler(filer, `${IAM_DIR}/policies.json`)) as {
    inlinePolicies: Record<string, unknown>;
  };
  const headBucket = onlyBucket(head.login, head.values);
  const inline = JSON.stringify(policies.inlinePolicies[head.login]);
  await inParallel(rest, 8, async (g) => {
    const bucket = onlyBucket(g.login, g.values);
    const identity: IdentityFile = {
      ...template,
      name: g.login,
      credentials: [{ access_key: accessKeyIdOf(provider.name, g.login), secret_key: g.password, status: 'Active' }],
      actions: template.actions.map((a) => a.replace(new RegExp(`:${headBucket}$`), `:${bucket}`)),
    };
    await writeFiler(filer, `${IAM_DIR}/identities/${g.login}.json`, JSON.stringify(identity, null, 2));
    const policy = JSON.parse(inline.split(`arn:aws:s3:::${headBucket}`).join(`arn:aws:s3:::${bucket}`)) as Record<
      string,
      unknown
    >;
    if (policyDifference(JSON.stringify(policy[POLICY_NAME]), policyDocument(g.values)!) !== undefined)
      throw new Error(`${g.login}: the template's policy, rewritten, is not the one its values ask`);
    policies.inlinePolicies[g.login] = policy;
  });
  await writeFiler(filer, `${IAM_DIR}/policies.json`, JSON.stringify(policies, null, 2));
  const last = rest.at(-1);
  const until = Date.now() + 120_000;
  while (last && !(await s3Login(s3, provider.name, last.login, last.password))) {
    if (Date.now() > until) throw new Error('the gateway did not take the seeded identities within 120 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Reads a provider's contributions file:
 *
 * ```yaml
 * consumers:                        # `consumers: []` declares none; an empty file is an error
 *   - id: photos                    # unique in the file
 *     login: app_photos             # unique in the file
 *     secret: grants/photos.secret  # the grant secret, relative to this file (not read here); it
 *                                   # must be in this file's directory (or below), or under the
 *                                   # provider's `secretsRoot`: a path leaving them (`../`, an
 *                                   # absolute path elsewhere, a symlink out) is refused, and
 *                                   # so is one in another provider's directory
 *     values: { keys: ['photos:*'] }  # optional, validated by the provider's adapter
 * ```
 *
 * Any problem with the file rejects all of it, so a truncated or mistyped file never removes a
 * consumer; so does a file larger than `sync.contributionsMaxBytes` (64 MiB), refused unread.
 * A consumer that asks for more than the provider's policy allows is rejected alone.
 */
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import type { ProviderConfig } from '../config/config.js';
import { invalidFile, YamlSource } from '../config/yaml-source.js';
import { sha256Hex } from '../secrets/sha256.js';
import { canonicalJson } from './canonical-json.js';
import { nameSchema } from '../config/names.js';
import { consumerKey } from '../store/consumer-key.js';
import type { DesiredState } from './consumer-spec.js';
import { consumerItemShape } from './consumer-item.js';
import { contributionsLimit } from './contributions-limit.js';
import { consumerProblems, rootsOf } from './consumer-problems.js';

const fileSchema = z.strictObject({ consumers: z.array(z.unknown()) });
const consumerSchema = z.strictObject({
  id: nameSchema,
  login: nameSchema,
  secret: z.string().min(1, 'must not be empty'),
  /** Validated by the adapter's values schema, apart. */
  values: z.unknown().optional(),
});

/**
 * The desired state `provider`'s contributions file declares. Throws `CONTRIBUTIONS_INVALID`
 * listing every problem as `<file>:<line>: <field>: <reason>` when the file cannot be used.
 */
export async function loadContributions(provider: ProviderConfig): Promise<DesiredState> {
  const file = provider.contributionsPath;
  const read = await YamlSource.read(file, contributionsLimit(provider));
  if (!read.ok) throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', file, read.problems);
  const { source } = read;
  if (source.value === null) {
    throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', file, [`${file}:1: (top level): the file is empty; write \`consumers: []\` to declare no consumers`]);
  }

  const problems: string[] = [];
  await source.check(fileSchema, source.value, problems);
  const listed = (source.value as { consumers?: unknown }).consumers;
  const items: unknown[] = Array.isArray(listed) ? listed : [];
  const consumers: { id: string; login: string; secret: string; values: unknown }[] = [];
  for (const [index, item] of items.entries()) {
    const shape = consumerItemShape(item);
    if (shape !== undefined) {
      problems.push(source.problem(['consumers', index], shape));
      continue;
    }
    const checked = await source.check(consumerSchema, item, problems, ['consumers', index]);
    const rawValues = (item as { values?: unknown }).values ?? {};
    const values = await source.check(provider.adapter.valuesSchema, rawValues, problems, ['consumers', index, 'values']);
    if (checked.ok && values.ok) consumers.push({ ...checked.value, values: values.value });
  }
  problems.push(...source.duplicates(items, ['consumers'], 'id'), ...source.duplicates(items, ['consumers'], 'login'));
  if (problems.length > 0) throw invalidFile('CONTRIBUTIONS_INVALID', 'contributions', file, problems);

  const dir = dirname(file);
  const roots = await rootsOf(provider);
  // Every item passed, so `index` is also the item's place in the file.
  const declared = await Promise.all(consumers.map(async ({ id, login, secret, values }, index) => {
    const at = source.at(['consumers', index]);
    const secretPath = resolve(dir, secret);
    const problems = await consumerProblems(source, provider, index, { id, login, secret, secretPath, values }, roots);
    const specHash = sha256Hex(canonicalJson({ login, values, secretPath }));
    return { key: consumerKey(provider.name, id), id, desired: { login, values, secretPath, specHash, source: at, removed: false, problems } };
  }));
  return { provider: provider.name, consumers: declared };
}

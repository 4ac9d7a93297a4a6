/**
 * The one check of a consumer's spec against its provider, run where contributions are read
 * and again by the worker before every apply, on the spec it is about to apply: whatever reached
 * the queue or the store, nothing is applied that the provider's configuration does not give.
 *
 * - `values` parse with the adapter's schema, and ask no more than the provider's policy allows
 *   (the adapter's `violations`), nor any of holdfast's own names on a server it shares
 *   (`own-names.ts`);
 * - `login` is a plain name, none of the provider's reserved logins, and starts with its
 *   `loginPrefix` when it has one;
 * - `secret` is an absolute path lexically inside the provider's secret roots (symlinks are
 *   judged where the secret is read).
 *
 * Pure and synchronous: no file is touched.
 */
import { isAbsolute } from 'node:path';
import type { ProviderConfig } from '../config/config.js';
import { formatPath, type FieldPath } from '../config/yaml-source.js';
import { NAME_PATTERN } from '../text/names.js';
import { misplaced, misplacedInWords, secretRootsOf } from '../secrets/secret-roots.js';
import { CONTROL_OR_FORMAT } from '../adapters/value-bounds.js';
import { ownNameProblems } from './own-names.js';

/** A consumer as its spec names it; `values` as written (they are parsed here). */
export interface SpecSubject {
  id: string;
  login: string;
  values: unknown;
  /** Absolute; undefined: not judged (a removal reads no secret). */
  secretPath?: string | undefined;
}

/**
 * One problem: with `login` or `secret` (the reason follows the field's value), a `values` schema
 * issue at `path` inside the values, or a `policy` sentence of the adapter's, which names its own field.
 */
export type SpecProblem =
  | { field: 'id' | 'login' | 'secret'; reason: string }
  | { field: 'values'; path: FieldPath; reason: string }
  | { field: 'policy'; reason: string };

export interface SpecCheck {
  /** The values as the adapter's schema parsed them; undefined when they do not parse. */
  values: unknown;
  problems: SpecProblem[];
}

type Provider = Pick<
  ProviderConfig,
  | 'name'
  | 'adapter'
  | 'policy'
  | 'loginPrefix'
  | 'reservedLogins'
  | 'reservedReasons'
  | 'contributionsPath'
  | 'secretsRoot'
  | 'foreignSecretRoots'
  | 'ownNames'
>;

const NAME_RULE = 'must be 1 to 128 letters, digits, _ . or -, starting with a letter or digit';

/** Why `login` is not one this provider's consumers may have; empty when it is. */
export function loginProblems(provider: Provider, login: string): string[] {
  const quoted = JSON.stringify(login);
  if (!NAME_PATTERN.test(login)) return [`${quoted} ${NAME_RULE}`];
  const problems: string[] = [];
  if (provider.reservedLogins.includes(login)) {
    problems.push(`${quoted} ${provider.reservedReasons?.get(login) ?? 'is reserved'}; no consumer may have it`);
  }
  const prefix = provider.loginPrefix;
  if (prefix !== undefined && !login.startsWith(prefix))
    problems.push(`${quoted} does not start with "${prefix}", the loginPrefix of provider ${provider.name}`);
  return problems;
}

/** A grant secret's path, resolved, in bytes at most: a longer one is refused, not opened. */
export const MAX_SECRET_PATH_BYTES = 1024;

/** `text` quoted as JSON, cut to its first `max` characters (`…` said) when longer: a value echoed in a problem. */
export function quotedShort(text: string, max = 128): string {
  return text.length <= max ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, max))}…`;
}

/** Why `path` is not where this provider's grant secrets may be; undefined when it is. */
export function secretPathProblem(provider: Provider, path: string): string | undefined {
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > MAX_SECRET_PATH_BYTES)
    return `is ${bytes.toLocaleString('en-US')} bytes long resolved, more than the ${MAX_SECRET_PATH_BYTES.toLocaleString('en-US')} allowed`;
  if (CONTROL_OR_FORMAT.test(path)) return 'may not contain control characters or Unicode format characters';
  if (!isAbsolute(path)) return 'is not an absolute path';
  const where = misplaced(path, secretRootsOf(provider));
  if (where === undefined) return undefined;
  return where.kind === 'outside' ? `leaves ${where.outside}` : `is ${misplacedInWords(where)}`;
}

/** Everything wrong with `subject` as a consumer of `provider`; no problems: it may be applied as parsed. */
export function checkSpec(provider: Provider, subject: SpecSubject): SpecCheck {
  const problems: SpecProblem[] = loginProblems(provider, subject.login).map((reason) => ({ field: 'login', reason }));
  // the worker takes the id from the record's key, which a hand-written job or record chose
  if (!NAME_PATTERN.test(subject.id)) problems.push({ field: 'id', reason: `${quotedShort(subject.id)} ${NAME_RULE}` });
  if (subject.secretPath !== undefined) {
    const reason = secretPathProblem(provider, subject.secretPath);
    if (reason) problems.push({ field: 'secret', reason });
  }
  const parsed = provider.adapter.valuesSchema.safeParse(subject.values);
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push({ field: 'values', path: issue.path, reason: issue.message });
    return { values: undefined, problems };
  }
  for (const reason of provider.adapter.violations(
    { id: subject.id, login: subject.login, values: parsed.data },
    provider.policy,
  )) {
    problems.push({ field: 'policy', reason });
  }
  for (const reason of ownNameProblems(provider.adapter, provider.ownNames, parsed.data))
    problems.push({ field: 'policy', reason });
  return { values: parsed.data, problems };
}

/** A problem as one sentence naming its field: `login: "default" is the admin login of provider cache; …`. */
export function describeSpecProblem(problem: SpecProblem, subject: Pick<SpecSubject, 'login' | 'secretPath'>): string {
  switch (problem.field) {
    case 'id':
      return `id: ${problem.reason}`;
    case 'login':
      return `login: ${problem.reason}`;
    case 'secret':
      return `secret: ${quotedShort(subject.secretPath ?? '')} ${problem.reason}`;
    case 'values':
      return `${formatPath(['values', ...problem.path])}: ${problem.reason}`;
    case 'policy':
      return problem.reason;
  }
}

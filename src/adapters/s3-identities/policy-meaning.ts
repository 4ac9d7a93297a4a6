/**
 * What an inline policy document means on SeaweedFS, and how two compare: as the set of
 * (action, resource) pairs their Allow statements grant, whatever their statement, action or
 * resource order, `Action`/`Resource` as a string or a list, duplicates, `Sid`s or how the
 * grants are split between statements. What SeaweedFS 4.48 was seen to do (the integration test
 * `s3-identities-policy-meaning` shows it):
 *
 * - a document whose `Version` is absent or not `2012-10-17` allows nothing, so it never means
 *   what the grant's does;
 * - `PutUserPolicy` refuses an `Effect` other than `Allow` (`allow`, `Deny`) and an action in
 *   another case (`s3:getobject`, `S3:GetObject`): action names and `Allow` are compared as
 *   written, the only spelling the server keeps;
 * - a `Condition` narrows what a statement allows: a statement with any key beside `Sid`,
 *   `Effect`, `Action` and `Resource` is not one the grant's policy has.
 *
 * Wildcards are not expanded: `s3:Get*` or `s3:*` is a different action from the grant's.
 */

import type { PolicyDocument } from './identity.js';

/** The one `Version` under which SeaweedFS applies a policy. */
export const POLICY_VERSION = '2012-10-17';

const STATEMENT_KEYS: ReadonlySet<string> = new Set(['Sid', 'Effect', 'Action', 'Resource']);

/** How many (action, resources) groups a detail names before it counts the rest. */
const SHOWN_GROUPS = 6;

/** One (action, resource) pair, as a set's key. */
const pair = (action: string, resource: string) => `${action}\u0000${resource}`;

/** A document's meaning: the (action, resource) pairs it allows, or why it is not a grant like holdfast's. */
export type PolicyMeaning = { ok: true; grants: ReadonlySet<string> } | { ok: false; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string or a non-empty list of strings, as a list; undefined for anything else. */
function names(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return value;
  return undefined;
}

/** The pairs one statement allows, or why it is not a statement like the grant's. */
function statementGrants(statement: unknown, n: number): string[] | string {
  if (!isObject(statement)) return `statement ${n} is not an object`;
  const other = Object.keys(statement).find((key) => !STATEMENT_KEYS.has(key));
  if (other !== undefined) return `statement ${n} carries ${other}, which the grant's policy has not`;
  if (statement['Effect'] !== 'Allow')
    return `statement ${n} has Effect ${JSON.stringify(statement['Effect']) ?? '(none)'}, not "Allow"`;
  const actions = names(statement['Action']);
  const resources = names(statement['Resource']);
  if (actions === undefined) return `statement ${n} has no Action as a string or a list of strings`;
  if (resources === undefined) return `statement ${n} has no Resource as a string or a list of strings`;
  return actions.flatMap((action) => resources.map((resource) => pair(action, resource)));
}

/** What `document` (JSON text) allows. */
export function policyMeaning(document: string): PolicyMeaning {
  let parsed: unknown;
  try {
    parsed = JSON.parse(document);
  } catch {
    return { ok: false, problem: 'the document is not JSON' };
  }
  if (!isObject(parsed)) return { ok: false, problem: 'the document is not a JSON object' };
  if (parsed['Version'] !== POLICY_VERSION) {
    const version =
      parsed['Version'] === undefined || parsed['Version'] === '' ? 'absent' : JSON.stringify(parsed['Version']);
    return {
      ok: false,
      problem: `its Version is ${version}: SeaweedFS applies only "${POLICY_VERSION}" (any other allows nothing)`,
    };
  }
  const statements = Array.isArray(parsed['Statement']) ? parsed['Statement'] : [parsed['Statement']];
  const grants = new Set<string>();
  for (const [i, statement] of statements.entries()) {
    const pairs = statementGrants(statement, i + 1);
    if (typeof pairs === 'string') return { ok: false, problem: pairs };
    for (const p of pairs) grants.add(p);
  }
  return { ok: true, grants };
}

/** `pairs` in words: each action with its resources, actions with the same resources together. */
export function pairsInWords(pairs: readonly string[]): string {
  const byAction = new Map<string, string[]>();
  for (const p of [...pairs].sort()) {
    const [action = '', resource = ''] = p.split('\u0000');
    byAction.set(action, [...(byAction.get(action) ?? []), resource]);
  }
  const byResources = new Map<string, string[]>();
  for (const [action, resources] of byAction) {
    const key = resources.join(', ');
    byResources.set(key, [...(byResources.get(key) ?? []), action]);
  }
  const groups = [...byResources].map(([resources, actions]) => `${actions.join(', ')} on ${resources}`);
  const more = groups.length - SHOWN_GROUPS;
  return groups.slice(0, SHOWN_GROUPS).join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/** The pairs holdfast's own document allows. */
export function grantsOf(document: PolicyDocument): Set<string> {
  return new Set(document.Statement.flatMap((s) => s.Action.flatMap((a) => s.Resource.map((r) => pair(a, r)))));
}

/** What `actual` (the server's JSON text) allows that `wanted` does not and the reverse, in words; undefined when they mean the same. */
export function policyDifference(actual: string, wanted: PolicyDocument): string | undefined {
  const have = policyMeaning(actual);
  if (!have.ok) return have.problem;
  const want = grantsOf(wanted);
  const extra = [...have.grants].filter((p) => !want.has(p));
  const lacking = [...want].filter((p) => !have.grants.has(p));
  const parts = [
    ...(extra.length > 0 ? [`the server also allows ${pairsInWords(extra)}`] : []),
    ...(lacking.length > 0 ? [`the server does not allow ${pairsInWords(lacking)}`] : []),
  ];
  return parts.length === 0 ? undefined : parts.join('; ');
}

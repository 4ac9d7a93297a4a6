/**
 * What differs between the spec a consumer was applied with and the one proposed, in words an
 * operator reads in a plan: rights widened or narrowed, key patterns added or dropped, a role
 * granted, a login renamed. Pure: values as the adapter's schema parsed them, on both sides.
 * Never a secret (a spec holds none: only where its grant secret is).
 */

/** The parts of a spec that tell one apply from another. */
export interface SpecSide {
  login: string;
  values: unknown;
  secretPath: string;
}

/** How a list field of the adapters' values is said: its noun, and the verbs for an item added and dropped. */
interface ListWords {
  noun: string;
  added: string;
  dropped: string;
}

const ADDED_DROPPED = { added: 'added', dropped: 'dropped' } as const;
const GRANTED_REVOKED = { added: 'granted', dropped: 'revoked' } as const;

/** The adapters' value fields (`src/adapters/<kind>/values.ts`) in words; another field is said by its name. */
const LIST_WORDS: Readonly<Record<string, ListWords>> = {
  keys: { noun: 'key patterns', ...ADDED_DROPPED },
  channels: { noun: 'channel patterns', ...ADDED_DROPPED },
  buckets: { noun: 'bucket patterns', ...ADDED_DROPPED },
  actions: { noun: 'actions', ...GRANTED_REVOKED },
  roles: { noun: 'roles', ...GRANTED_REVOKED },
  databases: { noun: 'databases', ...GRANTED_REVOKED },
  schemas: { noun: 'schemas', ...GRANTED_REVOKED },
};

/** Items named in one line, at most; the rest are counted. */
const NAMED_AT_MOST = 8;

function named(items: readonly string[]): string {
  const shown = items.slice(0, NAMED_AT_MOST).map((item) => JSON.stringify(item));
  return items.length > NAMED_AT_MOST
    ? `${shown.join(', ')} and ${items.length - NAMED_AT_MOST} more`
    : shown.join(', ');
}

function asStrings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}

/** The items of `after` not in `before`, and of `before` not in `after`. */
function setDifference(before: readonly string[], after: readonly string[]): { added: string[]; dropped: string[] } {
  const was = new Set(before);
  const is = new Set(after);
  return { added: after.filter((item) => !was.has(item)), dropped: before.filter((item) => !is.has(item)) };
}

/**
 * Redis command rules: a `+` rule added or a `-` rule dropped widens what the login may run; a
 * `+` rule dropped or a `-` rule added narrows it.
 */
function commandRules(before: readonly string[], after: readonly string[]): string[] {
  const { added, dropped } = setDifference(before, after);
  const allows = (rule: string) => rule.startsWith('+');
  const widened = [
    ...added.filter(allows).map((r) => `${JSON.stringify(r)} added`),
    ...dropped.filter((r) => !allows(r)).map((r) => `${JSON.stringify(r)} dropped`),
  ];
  const narrowed = [
    ...added.filter((r) => !allows(r)).map((r) => `${JSON.stringify(r)} added`),
    ...dropped.filter(allows).map((r) => `${JSON.stringify(r)} dropped`),
  ];
  const lines: string[] = [];
  if (widened.length > 0) lines.push(`command rules widened: ${widened.join(', ')}`);
  if (narrowed.length > 0) lines.push(`command rules narrowed: ${narrowed.join(', ')}`);
  if (lines.length === 0 && before.join('\n') !== after.join('\n'))
    lines.push('command rules reordered (a later rule overrides an earlier one)');
  return lines;
}

/** One list field's differences: items added (widened) and dropped (narrowed), or reordered. */
function listField(field: string, before: readonly string[], after: readonly string[]): string[] {
  if (field === 'commands') return commandRules(before, after);
  const words = LIST_WORDS[field] ?? { noun: field, ...ADDED_DROPPED };
  const { added, dropped } = setDifference(before, after);
  const lines: string[] = [];
  if (added.length > 0) lines.push(`${words.noun} ${words.added}: ${named(added)} (widened)`);
  if (dropped.length > 0) lines.push(`${words.noun} ${words.dropped}: ${named(dropped)} (narrowed)`);
  if (lines.length === 0 && before.join('\n') !== after.join('\n')) lines.push(`${words.noun} reordered`);
  return lines;
}

/** What differs in one field of the values. */
function valueField(field: string, before: unknown, after: unknown): string[] {
  const was = asStrings(before ?? []);
  const is = asStrings(after ?? []);
  if (was && is && (Array.isArray(before) || Array.isArray(after))) return listField(field, was, is);
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (before === undefined) return [`${field} set to ${JSON.stringify(after)}`];
  if (after === undefined) return [`${field} no longer set (was ${JSON.stringify(before)})`];
  return [`${field} changes from ${JSON.stringify(before)} to ${JSON.stringify(after)}`];
}

function fieldsOf(values: unknown): Record<string, unknown> {
  return typeof values === 'object' && values !== null && !Array.isArray(values)
    ? (values as Record<string, unknown>)
    : {};
}

/** Each difference between `before` (as applied) and `after` (as proposed), one sentence each; empty when none. */
export function specDifferences(before: SpecSide, after: SpecSide): string[] {
  const lines: string[] = [];
  if (before.login !== after.login)
    lines.push(`login renamed from ${JSON.stringify(before.login)} to ${JSON.stringify(after.login)}`);
  const was = fieldsOf(before.values);
  const is = fieldsOf(after.values);
  const fields = [...new Set([...Object.keys(was), ...Object.keys(is)])].sort();
  for (const field of fields) lines.push(...valueField(field, was[field], is[field]));
  if (before.secretPath !== after.secretPath)
    lines.push(
      `grant secret read from ${JSON.stringify(after.secretPath)} instead of ${JSON.stringify(before.secretPath)}`,
    );
  return lines;
}

/** A grant secret that changed since it was applied. */
export const PASSWORD_ROTATION = 'password rotation: its grant secret changed since it was applied';

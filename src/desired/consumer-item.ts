/**
 * The shape of one item of `consumers:` before its fields are checked: a mapping, or one
 * problem naming the item and what it is instead (`- - id: x` is a list inside the list).
 */

/** What `item` is, in YAML's words. */
function kindOf(item: unknown): string {
  if (item === null || item === undefined) return 'nothing';
  if (Array.isArray(item)) return 'a list';
  if (typeof item === 'string') return 'a string';
  if (typeof item === 'object') return 'a mapping';
  return `a ${typeof item}`;
}

/** Why `item` is not a consumer's mapping, or undefined when it is one. */
export function consumerItemShape(item: unknown): string | undefined {
  if (typeof item === 'object' && item !== null && !Array.isArray(item)) return undefined;
  return `expected a mapping with id, login, secret; got ${kindOf(item)}`;
}

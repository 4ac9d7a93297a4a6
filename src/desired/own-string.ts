/**
 * A copy of `text` that holds on to nothing else. A string V8 cut from a longer one (a value the
 * YAML parser read, 13 characters or more) keeps the whole longer one alive, here a contributions
 * file's text; one kept for the life of the process (a consumer's key or login) is copied first.
 */
export function ownString(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

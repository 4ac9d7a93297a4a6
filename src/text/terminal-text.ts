/**
 * The one way the CLI writes to a terminal: every problem, reason and name it prints was written
 * by someone else (a contributions file's keys and values, a backend's error, a record), so no
 * byte of it may act on the terminal. C0 and C1 controls and Unicode format characters (`\p{Cf}`:
 * U+202E and the other bidirectional overrides, zero-width joiners, tags) are written as JSON
 * escapes (`\u001b`, `\u202e`), which also keeps `--json` output valid JSON with the same meaning.
 */

/** Every control and format character, the newline too; {@link inertLines} keeps the newline. */
const UNSAFE = /[\p{Cc}\p{Cf}]/gu;
const UNSAFE_BUT_NEWLINE = /(?!\n)[\p{Cc}\p{Cf}]/gu;

/** `\uXXXX` for each UTF-16 unit of `char` (a pair for a character beyond the BMP, as JSON writes it). */
function escaped(char: string): string {
  let out = '';
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** `text` with every control and format character escaped, newlines included: one line, inert. */
export function inertText(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** `text` with every control and format character escaped but the newline: lines holdfast composed, inert. */
export function inertLines(text: string): string {
  return text.replace(UNSAFE_BUT_NEWLINE, escaped);
}

/** Writes `text` to standard output, inert. */
export function printOut(text: string): void {
  process.stdout.write(inertLines(text));
}

/** Writes `text` to standard error, inert. */
export function printErr(text: string): void {
  process.stderr.write(inertLines(text));
}

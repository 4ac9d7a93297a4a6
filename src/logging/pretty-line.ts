/**
 * A log line as a person reads it in a terminal (pino-pretty: `[HH:MM:ss.l] LEVEL (holdfast): message`, then the
 * fields), the one formatter of `holdfast run` on a terminal and of the example showing a child's JSON lines.
 *
 * No byte of a line may act on the terminal: messages and fields carry names, reasons and errors written by others (a
 * contributions file, a backend), and pino-pretty prints a message as it is. So every string of the entry is made
 * inert first (`status/terminal-text.ts`: control and format characters as `\uXXXX`); a stack keeps its newlines, the
 * one place a value is several lines. The only escape sequences left are the formatter's own colours.
 */
import { prettyFactory } from 'pino-pretty';
import { inertLines, inertText } from '../text/terminal-text.js';

/** How holdfast's lines are shown (the time of day, no pid nor host). */
export const PRETTY_OPTIONS = { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } as const;

/** `value` with every string in it inert (keys too), `stack`s keeping their newlines. */
function inert(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return key === 'stack' ? inertLines(value) : inertText(value);
  if (Array.isArray(value)) return value.map((v) => inert(v));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [inertText(k), inert(v, k)]));
}

/**
 * A formatter of log lines: a JSON entry becomes its human form (ending in a newline); anything else (a line that is not
 * an entry) is shown as it is, inert.
 */
export function prettyLines(options: { colorize: boolean }): (line: string) => string {
  const pretty = prettyFactory({ ...PRETTY_OPTIONS, colorize: options.colorize });
  return (line) => {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      entry = undefined;
    }
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      return `${inertText(line.replace(/\n$/, ''))}\n`;
    return pretty(inert(entry));
  };
}

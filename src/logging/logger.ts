/**
 * pino, JSON by default and pretty in a terminal (`pretty-line.ts`: its human form, every string inert). Every line
 * is scrubbed of the admin secrets on its way out; grant secrets never reach the logger unscrubbed (effects scrub what
 * they report with the one secret they read).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyLines } from './pretty-line.js';
import type { Scrubber } from './scrubber.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level: string;
  format: 'json' | 'pretty';
  scrubber: Scrubber;
  /** Where lines go (default: stdout). */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const sink: DestinationStream = options.destination ?? pino.destination(1);
  const shown =
    options.format === 'pretty' ? prettyLines({ colorize: options.destination === undefined }) : (line: string) => line;
  const scrubbing: DestinationStream = { write: (line: string) => sink.write(shown(options.scrubber.scrub(line))) };
  return pino({ level: options.level, base: { name: 'holdfast' } }, scrubbing);
}

/**
 * pino, JSON by default and pretty in a terminal. Every line is scrubbed of the admin
 * secrets on its way out; grant secrets never reach the logger unscrubbed (effects scrub
 * what they report with the one secret they read).
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
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
  const sink: DestinationStream =
    options.format === 'pretty'
      ? pretty({
          destination: options.destination ?? 1,
          colorize: options.destination === undefined,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : (options.destination ?? pino.destination(1));
  const scrubbing: DestinationStream = { write: (line: string) => sink.write(options.scrubber.scrub(line)) };
  return pino({ level: options.level, base: { name: 'holdfast' } }, scrubbing);
}

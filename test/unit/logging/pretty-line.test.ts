/**
 * holdfast's log in a terminal: a JSON entry in its human form, and no byte written by someone else (a message, a
 * field, an error's stack, a line that is not an entry) acts on the terminal, through the formatter and through the
 * logger's pretty mode.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import { prettyLines } from '../../../src/logging/pretty-line.js';
import { Scrubber } from '../../../src/logging/scrubber.js';

const HOSTILE = 'a\u001b]0;owned\u0007b\u001b[2Jc\u202ed\re\nf';
/** Any control or format character but the newline. */
const CONTROL = /(?!\n)[\p{Cc}\p{Cf}]/u;
/** The formatter's own colours (SGR), the only escape sequences allowed. */
// eslint-disable-next-line no-control-regex
const COLOURS = /\u001b\[\d+m/g;

const entry = (fields: Record<string, unknown>) =>
  JSON.stringify({
    level: 30,
    time: Date.parse('2026-12-07T10:00:00Z'),
    pid: 7,
    hostname: 'h',
    name: 'holdfast',
    ...fields,
  });

describe('a log line in a terminal', () => {
  it('is shown in its human form: time, level, name, message, then the fields', () => {
    const shown = prettyLines({ colorize: false })(entry({ msg: 'cache answers again', provider: 'cache' }));
    expect(shown).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(holdfast\): cache answers again\n {4}provider: "cache"\n$/,
    );
    expect(shown).not.toContain('"level"');
    expect(shown).not.toMatch(/pid|hostname/);
  });

  it('shows no control character of a message, a field, a key or a stack, coloured or not', () => {
    const line = entry({
      msg: HOSTILE,
      consumer: HOSTILE,
      [HOSTILE]: 1,
      nested: { reason: [HOSTILE] },
      err: { type: 'Error', message: HOSTILE, stack: `Error: ${HOSTILE}\n    at here` },
    });
    for (const colorize of [false, true]) {
      const shown = prettyLines({ colorize })(line);
      expect(shown.replace(COLOURS, '')).not.toMatch(CONTROL);
      expect(shown).toContain('a\\u001b]0;owned\\u0007b\\u001b[2Jc\\u202ed\\u000de\\u000af');
    }
    // the message stays on its line: its newline cannot forge another entry
    expect(prettyLines({ colorize: false })(entry({ msg: `x\n[10:00:00.000] INFO (holdfast): all held` }))).toMatch(
      /^[^\n]*x\\u000a\[10:00:00\.000\] INFO/,
    );
  });

  it('shows a line that is not an entry as it is, inert, on one line', () => {
    const pretty = prettyLines({ colorize: true });
    expect(pretty(`not json ${HOSTILE}`)).toBe(
      'not json a\\u001b]0;owned\\u0007b\\u001b[2Jc\\u202ed\\u000de\\u000af\n',
    );
    expect(pretty('"a string"')).toBe('"a string"\n');
    expect(pretty('[1,2]')).toBe('[1,2]\n');
  });

  it("is what the logger's pretty mode writes, scrubbed first, inert", () => {
    let written = '';
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.toString();
        done();
      },
    });
    const scrubber = new Scrubber();
    scrubber.add('s3cr3t-admin');
    const logger = createLogger({ level: 'info', format: 'pretty', scrubber, destination });
    logger.info({ reason: `${HOSTILE} s3cr3t-admin` }, `lost: ${HOSTILE}`);
    expect(written).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(holdfast\): lost: a\\u001b\]0;owned/);
    expect(written).not.toMatch(CONTROL);
    expect(written).not.toContain('s3cr3t-admin');
  });
});

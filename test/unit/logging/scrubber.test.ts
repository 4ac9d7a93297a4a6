import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import { REDACTED, Scrubber } from '../../../src/logging/scrubber.js';

describe('scrubber', () => {
  it('removes a secret as is, JSON-escaped, and as its SHA-256', () => {
    const secret = 'pa"ss\\word-1234';
    const s = new Scrubber([secret]);
    const hash = createHash('sha256').update(secret).digest('hex');
    expect(s.scrub(`auth ${secret} then #${hash} and ${JSON.stringify(secret)}`)).toBe(`auth ${REDACTED} then #${REDACTED} and "${REDACTED}"`);
  });

  it('extends a parent for one effect without keeping the child secret', () => {
    const admin = new Scrubber(['admin-secret-1']);
    const effect = admin.with('grant-secret-2');
    expect(effect.scrub('admin-secret-1 grant-secret-2')).toBe(`${REDACTED} ${REDACTED}`);
    expect(admin.scrub('grant-secret-2')).toBe('grant-secret-2');
  });

  it('describes an error with its causes, scrubbed', () => {
    const s = new Scrubber(['hunter2-long']);
    const error = new Error('ERR bad modifier >hunter2-long', { cause: new Error('sent hunter2-long') });
    expect(s.describe(error)).toBe(`ERR bad modifier >${REDACTED}: sent ${REDACTED}`);
  });

  it('scrubs every log line on its way out, including error stacks', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) });
    const scrubber = new Scrubber(['admin-password-9']);
    const logger = createLogger({ level: 'info', format: 'json', scrubber, destination: sink });
    logger.error({ err: new Error('connect failed for admin-password-9') }, 'admin-password-9 leaked?');
    expect(lines.join('')).not.toContain('admin-password-9');
    expect(lines.join('')).toContain(REDACTED);
  });
});

describe('scrubber, registering twice', () => {
  it('keeps one copy of a secret added again (the CLI and the engine both register the config)', () => {
    const s = new Scrubber();
    s.add('admin-secret-1', 'admin-secret-1');
    s.add('admin-secret-1');
    expect((s as unknown as { forms: string[] }).forms).toHaveLength(2);
    expect(s.scrub('x admin-secret-1 y')).toBe(`x ${REDACTED} y`);
  });
});

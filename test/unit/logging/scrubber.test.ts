import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { REDACTED, Scrubber } from '../../../src/logging/scrubber.js';

describe('scrubber', () => {
  it('removes a secret as is, JSON-escaped, and in the forms an adapter declares (redis-acl: its SHA-256)', () => {
    const secret = 'pa"ss\\word-1234';
    const s = new Scrubber([secret]);
    const hash = createHash('sha256').update(secret).digest('hex');
    const text = `auth ${secret} then #${hash} and ${JSON.stringify(secret)}`;
    expect(s.scrub(text)).toBe(`auth ${REDACTED} then #${hash} and "${REDACTED}"`); // it does not know Redis
    s.learn(redisAcl.secretForms!);
    expect(s.scrub(text)).toBe(`auth ${REDACTED} then #${REDACTED} and "${REDACTED}"`);
    // a child made before or after learns them too, and so do its own secrets
    const child = s.with('grant-secret-5');
    expect(child.scrub(createHash('sha256').update('grant-secret-5').digest('hex'))).toBe(REDACTED);
  });

  it('removes literal derived forms an adapter gives for one call (a salted verifier), as is and JSON-escaped', () => {
    const s = new Scrubber(['admin-secret-1']).withForms(['SCRAM-SHA-256$4096:c2FsdA==$a/b+c=:d/e+f=']);
    expect(s.scrub('x SCRAM-SHA-256$4096:c2FsdA==$a/b+c=:d/e+f= y admin-secret-1')).toBe(`x ${REDACTED} y ${REDACTED}`);
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
    expect((s as unknown as { forms: string[] }).forms).toHaveLength(1);
    expect(s.scrub('x admin-secret-1 y')).toBe(`x ${REDACTED} y`);
  });
});

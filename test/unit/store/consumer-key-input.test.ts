/**
 * A consumer key as typed: bounded, no control character, `<provider>/<id>` of names; refused clearly, never echoing a
 * control character.
 */
import { describe, expect, it } from 'vitest';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { consumerKeyInput, MAX_KEY_LENGTH } from '../../../src/store/consumer-key-input.js';

function refusal(text: string): string {
  try {
    consumerKeyInput(text);
    return 'accepted';
  } catch (error) {
    return isHoldfastError(error, 'CONSUMER_KEY_INVALID') ? error.message : `other: ${String(error)}`;
  }
}

describe('a consumer key as typed', () => {
  it('is taken apart into provider and id', () => {
    expect(consumerKeyInput('cache/photos')).toEqual({ key: 'cache/photos', provider: 'cache', id: 'photos' });
    expect(consumerKeyInput(`${'p'.repeat(128)}/${'i'.repeat(128)}`).id).toHaveLength(128);
  });

  it('is refused when not <provider>/<id> of names: a path, an empty part, a second slash', () => {
    for (const text of [
      '../x',
      'x/..',
      '/x',
      'x/',
      'x',
      '',
      'a/b/c',
      'cache/.hidden',
      'cache/ph otos',
      'cache\\photos',
    ]) {
      expect(refusal(text), text).toMatch(
        /is not a consumer key; a consumer key is <provider>\/<id>, each 1 to 128 letters/,
      );
    }
  });

  it('is refused when too long, saying how long, before anything else is looked at', () => {
    expect(refusal(`cache/${'x'.repeat(MAX_KEY_LENGTH)}`)).toBe(
      `the consumer key given is ${MAX_KEY_LENGTH + 6} characters long, more than ${MAX_KEY_LENGTH}; a consumer key is <provider>/<id>, each 1 to 128 letters, digits, _ . or -, starting with a letter or digit`,
    );
  });

  it('is refused when it holds a control or format character, which is never echoed', () => {
    for (const text of [
      'cache/\u001b[31mred',
      'cache/photos\n',
      'cache/\u202eotohp',
      'cache/\u0000',
      'cache/\u009bx',
    ]) {
      const said = refusal(text);
      expect(said, JSON.stringify(text)).toMatch(
        /^the consumer key given holds a control or format character \(at \d+\): "/,
      );
      expect(said).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    }
    expect(refusal('cache/\u001b[31mred')).toContain('"cache/\\u001b[31mred"');
  });
});

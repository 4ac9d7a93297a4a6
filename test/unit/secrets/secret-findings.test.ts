/**
 * The grant secret classifier: each kind found where it is, nothing said of a sound secret, never a byte of the secret
 * in the words.
 */
import { describe, expect, it } from 'vitest';
import {
  findingInWords,
  firstNonUtf8,
  secretFindings,
  type SecretFindingKind,
} from '../../../src/secrets/secret-findings.js';

const kinds = (text: string | Buffer) =>
  secretFindings(typeof text === 'string' ? Buffer.from(text, 'utf8') : text).map(
    (f) => `${f.kind}@${f.offset}${f.refused ? '!' : ''}`,
  );

describe('secretFindings', () => {
  it('finds nothing in a sound secret, with or without its newline', () => {
    expect(kinds('a-long-password\n')).toEqual([]);
    expect(kinds('a-long-password')).toEqual([]);
    expect(kinds('pässwörd-ünïcode\n')).toEqual([]);
    expect(kinds('with inner space\n')).toEqual([]);
  });

  it('names whitespace at either end, with its offset', () => {
    expect(kinds('password \n')).toEqual(['trailing-whitespace@8']);
    expect(kinds('password\t')).toEqual(['trailing-whitespace@8']);
    expect(kinds(' password\n')).toEqual(['leading-whitespace@0']);
    expect(kinds('password \r\n')).toEqual(['trailing-whitespace@8', 'crlf@9']);
  });

  it('names line ends: a CRLF (warned), a second newline and a lone CR (refused)', () => {
    expect(kinds('password\r\n')).toEqual(['crlf@8']);
    expect(kinds('password\n\n')).toEqual(['extra-newline@8!']);
    expect(kinds('password\r\n\r\n')).toEqual(['extra-newline@9!', 'crlf@10']);
    expect(kinds('pass\nword\n')).toEqual(['extra-newline@4!']);
    expect(kinds('pass\rword\n')).toEqual(['carriage-return@4!']);
    expect(kinds('password\r')).toEqual(['carriage-return@8!']);
  });

  it('names a byte-order mark and bytes that are not UTF-8, at the first bad byte', () => {
    expect(kinds(Buffer.from('\ufeffpassword\n', 'utf8'))).toEqual(['byte-order-mark@0']);
    expect(kinds(Buffer.from([0x61, 0x62, 0x63, 0xff, 0x64, 0x65, 0x66, 0x67, 0x0a]))).toEqual(['not-utf8@3!']);
    // a lead byte whose continuation is wrong: the character's first byte
    expect(kinds(Buffer.from([0x61, 0x62, 0xe2, 0x28, 0xa1, 0x65, 0x66, 0x67]))).toEqual(['not-utf8@2!']);
    // cut short at the end
    expect(firstNonUtf8(Buffer.from([0x61, 0x62, 0x63, 0x64, 0xc3]))).toBe(4);
    expect(firstNonUtf8(Buffer.from('ok ü', 'utf8'))).toBe(-1);
  });

  it('names a value of the form of a hash a backend would take as one', () => {
    const hex = 'ab'.repeat(32);
    expect(kinds(`${hex}\n`)).toEqual(['sha256-hex@0']);
    expect(kinds(`${hex.toUpperCase()}`)).toEqual(['sha256-hex@0']);
    expect(kinds(`${hex}0\n`)).toEqual([]); // 65 digits: no SHA-256
    expect(kinds('SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy\n')).toEqual(['scram-verifier@0']);
    expect(kinds(`md5${'0f'.repeat(16)}\n`)).toEqual(['md5-hash@0']);
    expect(kinds(`md5${'0f'.repeat(15)}\n`)).toEqual([]);
  });

  it('says each finding without any byte of the secret', () => {
    const secret = 'Zq9-unique-secret-text ';
    for (const f of secretFindings(Buffer.from(`${secret}\r\n\n`))) {
      const words = findingInWords(f);
      expect(words).not.toContain('Zq9');
      expect(words).toMatch(/\(byte \d+; (refused|used as it is: a warning)\)$/);
    }
    // a CRLF then a second LF: the second line is what is wrong
    const all: SecretFindingKind[] = ['trailing-whitespace', 'extra-newline'];
    expect(secretFindings(Buffer.from(`${secret}\r\n\n`)).map((f) => f.kind)).toEqual(all);
  });
});

/**
 * What a grant secret's bytes hold that its writer probably did not mean: one pure function
 * ({@link secretFindings}) shared by `holdfast doctor` and the warning said at a secret's first
 * read (`secret-warnings.ts`). A finding names its kind and where (a byte offset), never the
 * secret: nothing here returns or says a byte of it.
 *
 * What a finding does (say what is wrong once, in words that fit; issue 28): a finding holdfast already refused before these
 * checks stays refused (`grant-secret.ts`: a second line, a carriage return elsewhere than a last
 * CRLF, bytes that are not UTF-8); every other one is a warning: the secret is used as it is, as
 * holdfast always used it, because the backend and the apps may already hold that very password.
 */

export const SECRET_FINDING_KINDS = [
  /** A space or tab before the line's end: part of the password. */
  'trailing-whitespace',
  /** A space or tab first: part of the password. */
  'leading-whitespace',
  /** Another newline after the first line (a blank line at the end): refused, more than one line. */
  'extra-newline',
  /** The line ends in CRLF: holdfast strips it; an app that strips only LF keeps a CR. */
  'crlf',
  /** A carriage return elsewhere than a last CRLF: refused, more than one line. */
  'carriage-return',
  /** A UTF-8 byte-order mark first (EF BB BF): U+FEFF becomes the password's first character. */
  'byte-order-mark',
  /** Bytes that are not UTF-8: refused, not text. */
  'not-utf8',
  /** 64 hex digits: the form of a SHA-256 hash, which Redis takes as one (`#<hex>`). */
  'sha256-hex',
  /** A SCRAM-SHA-256 verifier, which PostgreSQL takes as the stored hash. */
  'scram-verifier',
  /** `md5` and 32 hex digits, which PostgreSQL takes as an MD5 hash. */
  'md5-hash',
] as const;

export type SecretFindingKind = (typeof SECRET_FINDING_KINDS)[number];

export interface SecretFinding {
  kind: SecretFindingKind;
  /** Where, in bytes from the file's start. */
  offset: number;
  /** Whether holdfast refuses the secret for it (else it only warns). */
  refused: boolean;
}

/** The kinds holdfast refuses (it did before these checks); every other kind only warns. */
const REFUSED: ReadonlySet<SecretFindingKind> = new Set(['extra-newline', 'carriage-return', 'not-utf8']);

const LF = 0x0a;
const CR = 0x0d;
const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09;
const BOM = [0xef, 0xbb, 0xbf] as const;

const finding = (kind: SecretFindingKind, offset: number): SecretFinding => ({
  kind,
  offset,
  refused: REFUSED.has(kind),
});

/** Where the password's line ends: before one last LF or CRLF (what `grant-secret.ts` strips). */
function lineEnd(bytes: Uint8Array): { end: number; crlf: boolean } {
  const n = bytes.length;
  if (bytes[n - 1] !== LF) return { end: n, crlf: false };
  const crlf = bytes[n - 2] === CR;
  return { end: n - (crlf ? 2 : 1), crlf };
}

/** The first byte that is not UTF-8 (an incomplete last character included), or -1. */
export function firstNonUtf8(bytes: Uint8Array): number {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return -1;
  } catch {
    // fed a byte at a time, a stream decoder throws at the byte that cannot continue
    const stream = new TextDecoder('utf-8', { fatal: true });
    let start = 0;
    for (let i = 0; i < bytes.length; i++) {
      try {
        if (stream.decode(bytes.subarray(i, i + 1), { stream: true }).length > 0) start = i + 1;
      } catch {
        return start;
      }
    }
    return start;
  }
}

/** The line breaks and blanks around the password's line. */
function layoutFindings(bytes: Uint8Array): SecretFinding[] {
  const out: SecretFinding[] = [];
  const { end, crlf } = lineEnd(bytes);
  if (crlf) out.push(finding('crlf', end));
  const lf = bytes.indexOf(LF);
  if (lf >= 0 && lf < end) out.push(finding('extra-newline', lf));
  const cr = bytes.indexOf(CR);
  if (cr >= 0 && cr < end && cr !== lf - 1) out.push(finding('carriage-return', cr));
  let last = end;
  while (last > 0 && (bytes[last - 1] === LF || bytes[last - 1] === CR)) last--;
  if (isBlank(bytes[last - 1])) out.push(finding('trailing-whitespace', last - 1));
  const first = startsWithBom(bytes) ? BOM.length : 0;
  if (isBlank(bytes[first])) out.push(finding('leading-whitespace', first));
  return out;
}

function startsWithBom(bytes: Uint8Array): boolean {
  return BOM.every((b, i) => bytes[i] === b);
}

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const SCRAM = /^SCRAM-SHA-256\$/;
const MD5 = /^md5[0-9a-fA-F]{32}$/;

/** A line that has the form of a hash a backend would take as one. */
function hashFinding(line: string): SecretFinding | undefined {
  if (SHA256_HEX.test(line)) return finding('sha256-hex', 0);
  if (SCRAM.test(line)) return finding('scram-verifier', 0);
  if (MD5.test(line)) return finding('md5-hash', 0);
  return undefined;
}

/**
 * Everything in a grant secret's `bytes` (as read, newline and all) that will not do what its
 * writer meant, in the order of {@link SECRET_FINDING_KINDS}; empty when nothing. Pure; bounded by
 * what it is given (`grant-secret.ts` reads at most 4,099 bytes).
 */
export function secretFindings(bytes: Uint8Array): SecretFinding[] {
  const out = layoutFindings(bytes);
  if (startsWithBom(bytes)) out.push(finding('byte-order-mark', 0));
  const bad = firstNonUtf8(bytes);
  if (bad >= 0) out.push(finding('not-utf8', bad));
  else {
    const hash = hashFinding(new TextDecoder().decode(bytes.subarray(0, lineEnd(bytes).end)));
    if (hash) out.push(hash);
  }
  const order = (f: SecretFinding) => SECRET_FINDING_KINDS.indexOf(f.kind);
  return out.sort((a, b) => order(a) - order(b));
}

/** What each kind means, in words that fit after the file's name. */
const WORDS: Record<SecretFindingKind, string> = {
  'trailing-whitespace': 'ends in a space or tab before its line ends: the password includes it',
  'leading-whitespace': 'begins with a space or tab: the password includes it',
  'extra-newline': 'holds a second newline (a blank line, or a second line): a password is one line',
  crlf: 'ends in CRLF: holdfast strips it, but an app that strips only LF would send a password ending in CR',
  'carriage-return': 'holds a carriage return (CR) inside: a password is one line',
  'byte-order-mark': 'begins with a byte-order mark (EF BB BF): the password includes U+FEFF as its first character',
  'not-utf8': 'holds bytes that are not UTF-8: a password is text',
  'sha256-hex':
    'is 64 hex digits, the form of a SHA-256 hash (Redis takes #<hex> as one): holdfast takes the file as the password itself and hashes it; an app given the password behind that hash cannot log in',
  'scram-verifier':
    'is a SCRAM-SHA-256 verifier, which PostgreSQL takes as a stored hash: holdfast takes the file as the password itself; an app given the password behind it cannot log in',
  'md5-hash':
    "is 'md5' and 32 hex digits, which PostgreSQL takes as an MD5 hash: holdfast takes the file as the password itself; an app given the password behind it cannot log in",
};

/** A finding in words: what, where (byte offset) and what holdfast does; never a byte of the secret. */
export function findingInWords(f: SecretFinding): string {
  return `${WORDS[f.kind]} (byte ${f.offset}; ${f.refused ? 'refused' : 'used as it is: a warning'})`;
}

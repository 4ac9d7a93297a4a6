/**
 * A consumer key as someone typed it (`holdfast history <key>`, `/consumers/<provider>/<id>/…`):
 * checked before anything is asked with it. Bounded first, then every character, then its shape:
 * `<provider>/<id>`, each a name of `text/names.ts`, so `../x`, an empty part or a second `/`
 * is refused. What is said of a refused key never holds a control or format character of it.
 */
import { NAME_PATTERN } from '../text/names.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { inertText } from '../text/terminal-text.js';
import { consumerKey } from './consumer-key.js';

/** The longest key: two names of 128 characters and the `/`. */
export const MAX_KEY_LENGTH = 257;
/** How much of a refused key is shown back. */
const SHOWN = 64;

const UNSAFE = /[\p{Cc}\p{Cf}]/u;
const SHAPE =
  'a consumer key is <provider>/<id>, each 1 to 128 letters, digits, _ . or -, starting with a letter or digit';

const invalid = (why: string) => new HoldfastError('CONSUMER_KEY_INVALID', `${why}; ${SHAPE}`);

/** The key as it may be shown: its first characters, control and format characters escaped. */
function shown(text: string): string {
  return `"${inertText(text.slice(0, SHOWN))}${text.length > SHOWN ? '…' : ''}"`;
}

/** `text` as a consumer key, or `CONSUMER_KEY_INVALID` saying why (never echoing a control character). */
export function consumerKeyInput(text: string): { key: string; provider: string; id: string } {
  if (text.length > MAX_KEY_LENGTH)
    throw invalid(`the consumer key given is ${text.length} characters long, more than ${MAX_KEY_LENGTH}`);
  const unsafe = UNSAFE.exec(text);
  if (unsafe)
    throw invalid(`the consumer key given holds a control or format character (at ${unsafe.index}): ${shown(text)}`);
  const slash = text.indexOf('/');
  const provider = text.slice(0, slash);
  const id = text.slice(slash + 1);
  if (slash < 0 || !NAME_PATTERN.test(provider) || !NAME_PATTERN.test(id))
    throw invalid(`${shown(text)} is not a consumer key`);
  return { key: consumerKey(provider, id), provider, id };
}

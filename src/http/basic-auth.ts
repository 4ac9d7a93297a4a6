/**
 * Basic auth for the dashboard. The username and the password given are each compared with the
 * expected ones by their SHA-256 digests (fixed length) with `timingSafeEqual`, both always, so
 * the time taken tells neither which one differed nor how long either is.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Whether an `Authorization` header carries exactly `expected`'s username and password. */
export function basicAuthChecker(expected: {
  username: string;
  password: string;
}): (header: string | undefined) => boolean {
  const username = digest(expected.username);
  const password = digest(expected.password);
  return (header) => {
    const match = header === undefined ? null : /^basic +([A-Za-z0-9+/=]*)\s*$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const userMatches = timingSafeEqual(digest(colon < 0 ? '' : decoded.slice(0, colon)), username);
    const passwordMatches = timingSafeEqual(digest(colon < 0 ? '' : decoded.slice(colon + 1)), password);
    return colon >= 0 && userMatches && passwordMatches;
  };
}

/** A driver's reason in words: `connection refused (connect ECONNREFUSED 127.0.0.1:1)`. */
export function inWords(reason: string): string {
  const words: Array<[RegExp, string]> = [
    [/ECONNREFUSED/, 'connection refused'],
    [/ENOTFOUND|EAI_AGAIN/, 'host not found'],
    [/ETIMEDOUT|timed out/i, 'timed out'],
    [/WRONGPASS|NOAUTH|Authentication failed/i, 'authentication failed'],
  ];
  const found = words.find(([pattern]) => pattern.test(reason));
  return found ? `${found[1]} (${reason})` : reason;
}

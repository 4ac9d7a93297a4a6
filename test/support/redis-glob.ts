/**
 * Redis's own glob match (`stringmatchlen` in its `util.c`, case-sensitive), ported line for line
 * on bytes: the oracle the tests judge `src/config/glob-overlap.ts` by, and what an ACL key or
 * channel pattern lets a tenant reach.
 */
export function redisGlobMatch(patternText: string, nameText: string): boolean {
  return matchAt(Buffer.from(patternText, 'utf8'), 0, Buffer.from(nameText, 'utf8'), 0);
}

function matchAt(p: Buffer, pi: number, s: Buffer, si: number): boolean {
  while (pi < p.length && si < s.length) {
    switch (p[pi]) {
      case 0x2a: // *
        while (pi + 1 < p.length && p[pi + 1] === 0x2a) pi++;
        if (pi + 1 === p.length) return true;
        for (let k = si; k < s.length; k++) if (matchAt(p, pi + 1, s, k)) return true;
        return false;
      case 0x3f: // ?
        si++;
        break;
      case 0x5b: {
        // [
        pi++;
        const not = p[pi] === 0x5e;
        if (not) pi++;
        let match = false;
        for (;;) {
          if (p[pi] === 0x5c && p.length - pi >= 2) {
            pi++;
            if (p[pi] === s[si]) match = true;
          } else if (p[pi] === 0x5d) {
            break;
          } else if (pi >= p.length) {
            pi--;
            break;
          } else if (p.length - pi >= 3 && p[pi + 1] === 0x2d) {
            let [start, end] = [p[pi]!, p[pi + 2]!];
            if (start > end) [start, end] = [end, start];
            pi += 2;
            if (s[si]! >= start && s[si]! <= end) match = true;
          } else if (p[pi] === s[si]) {
            match = true;
          }
          pi++;
        }
        if (not) match = !match;
        if (!match) return false;
        si++;
        break;
      }
      default:
        if (p[pi] === 0x5c && p.length - pi >= 2) pi++; // \ escapes the next byte (a last one is itself)
        if (p[pi] !== s[si]) return false;
        si++;
        break;
    }
    pi++;
    if (si === s.length) while (pi < p.length && p[pi] === 0x2a) pi++;
  }
  return pi === p.length && si === s.length;
}

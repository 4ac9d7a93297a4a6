/**
 * Whether two Redis glob patterns can match one name: is there a key (or channel) that both
 * `ACL` patterns, or a pattern and holdfast's own prefix, would cover? Judged as Redis judges a
 * pattern (`stringmatchlen` in its `util.c`): on bytes (UTF-8), `*` any run, `?` any byte, `[…]`
 * a class (`^` after `[` negates, `a-z` a range either way round, `\` escapes, an unclosed class
 * ends with the pattern), `\` escapes one byte (a trailing one is itself).
 *
 * Each pattern is read as a list of steps (any run, or one byte of a set); a name both match is
 * a walk through both lists at once, found by a search over pairs of positions: at most
 * (513 × 513) pairs for the longest patterns values allow.
 */

/** One step of a pattern: any run of bytes, one given byte, or one byte of a set (256 flags). */
type Step = { run: true } | { run: false; byte: number } | { run: false; bytes: Uint8Array };

const ANY_BYTE = new Uint8Array(256).fill(1);

const one = (byte: number): Step => ({ run: false, byte });

/** The class starting after `[` at `at` (bytes of the pattern): its set and where the pattern goes on. */
function classAt(p: Uint8Array, at: number): { bytes: Uint8Array; next: number } {
  const bytes = new Uint8Array(256);
  let i = at;
  const not = p[i] === 0x5e; // ^
  if (not) i++;
  for (;;) {
    if (i >= p.length) break; // an unclosed class ends with the pattern
    if (p[i] === 0x5c && i + 1 < p.length) {
      bytes[p[i + 1]!] = 1;
      i += 2;
    } else if (p[i] === 0x5d) {
      i++;
      break;
    } else if (i + 2 < p.length && p[i + 1] === 0x2d) {
      const [from, to] = [Math.min(p[i]!, p[i + 2]!), Math.max(p[i]!, p[i + 2]!)];
      for (let b = from; b <= to; b++) bytes[b] = 1;
      i += 3;
    } else {
      bytes[p[i]!] = 1;
      i++;
    }
  }
  if (not) for (let b = 0; b < 256; b++) bytes[b] = bytes[b] ? 0 : 1;
  return { bytes, next: i };
}

/** `pattern` as steps, runs of `*` as one. */
function globSteps(pattern: string): Step[] {
  const p = Buffer.from(pattern, 'utf8');
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === 0x2a) {
      if (!steps.at(-1)?.run) steps.push({ run: true });
      i++;
    } else if (c === 0x3f) {
      steps.push({ run: false, bytes: ANY_BYTE });
      i++;
    } else if (c === 0x5b) {
      const { bytes, next } = classAt(p, i + 1);
      steps.push({ run: false, bytes });
      i = next;
    } else if (c === 0x5c && i + 1 < p.length) {
      steps.push(one(p[i + 1]!));
      i += 2;
    } else {
      steps.push(one(c));
      i++;
    }
  }
  return steps;
}

/** Whether one byte can be taken by both steps (neither a run). */
function meet(a: Exclude<Step, { run: true }>, b: Exclude<Step, { run: true }>): boolean {
  if ('byte' in a) return 'byte' in b ? a.byte === b.byte : b.bytes[a.byte] === 1;
  if ('byte' in b) return a.bytes[b.byte] === 1;
  for (let i = 0; i < 256; i++) if (a.bytes[i] && b.bytes[i]) return true;
  return false;
}

/** Whether a step can take some byte (a class may be empty: `[]`). */
const takes = (step: Step) => step.run || 'byte' in step || step.bytes.includes(1);

/** `at` with every position a run of `x` reaches without a byte added (a run may be empty). */
function closed(x: readonly Step[], at: Uint8Array): Uint8Array {
  for (let i = 0; i < x.length; i++) if (at[i] && x[i]!.run) at[i + 1] = 1;
  return at;
}

/**
 * Whether some name matches both `a` and `b` (Redis glob patterns): `a`'s steps walked along
 * `b`'s, keeping the set of positions `a` can be at (one sweep of `a` per step of `b`).
 */
export function globsMeet(a: string, b: string): boolean {
  return stepsMeet(globSteps(a), globSteps(b));
}

/** The first of `globs` that `pattern` meets (see {@link globsMeet}), `pattern` read once; undefined when none. */
export function firstMet(pattern: string, globs: readonly string[]): string | undefined {
  const x = globSteps(pattern);
  return globs.find((glob) => stepsMeet(x, globSteps(glob)));
}

function stepsMeet(x: readonly Step[], y: readonly Step[]): boolean {
  const start = new Uint8Array(x.length + 1);
  start[0] = 1;
  let at = closed(x, start);
  for (const t of y) {
    const next = new Uint8Array(x.length + 1);
    if (t.run) {
      // any bytes: `a` goes on through every step that takes one
      for (let i = 0, open = false; i <= x.length; i++) {
        if (at[i]) open = true;
        if (open) next[i] = 1;
        if (i < x.length && !takes(x[i]!)) open = false;
      }
    } else {
      for (let i = 0; i < x.length; i++) {
        if (!at[i]) continue;
        const s = x[i]!;
        if (s.run)
          next[i] = 1; // the run takes t's byte
        else if (meet(s, t)) next[i + 1] = 1;
      }
    }
    at = closed(x, next);
    if (!at.includes(1)) return false;
  }
  return at[x.length] === 1;
}

/** A pattern matching exactly the names that start with `prefix` (its glob characters escaped). */
export function prefixGlob(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
}

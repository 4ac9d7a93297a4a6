/**
 * `npx tsx test/bench/cpu-profile-top.ts <file.cpuprofile> [rows] [--window <from-s> <to-s>]`: where
 * a V8 CPU profile's time went, by self time, grouped by source file (node_modules by package) and
 * by function; `--window`: only the samples taken from `from-s` to `to-s` seconds before the
 * profile ended (the heal bench's heal is the last minute or so before its engine stops).
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  endTime: number;
}

const args = process.argv.slice(2);
const windowAt = args.indexOf('--window');
const window =
  windowAt >= 0 ? { from: Number(args[windowAt + 1]) * 1e6, to: Number(args[windowAt + 2]) * 1e6 } : undefined;
if (windowAt >= 0) args.splice(windowAt, 3);
const [file, rowsArg] = args;
if (!file) throw new Error('usage: cpu-profile-top.ts <file.cpuprofile> [rows]');
const rows = Number(rowsArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
const takenAt: number[] = [];
profile.timeDeltas.reduce((at, delta, i) => (takenAt[i] = at + delta), 0);
const last = takenAt.at(-1) ?? 0;
profile.samples.forEach((id, i) => {
  const before = last - takenAt[i]!;
  if (window && (before > window.from || before < window.to)) return;
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/((?:src|workers|machines)\/.*)$/.exec(url);
  return own ? own[1]! : url === '' ? '(native/gc/idle)' : url.replace(/^.*\//, '');
}

function top(key: (n: Node) => string, title: string): void {
  const sums = new Map<string, number>();
  for (const [id, us] of self) {
    const k = key(byId.get(id)!);
    sums.set(k, (sums.get(k) ?? 0) + us);
  }
  process.stdout.write(`${title} (of ${(total / 1e6).toFixed(1)} s sampled)\n`);
  for (const [k, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, rows))
    process.stdout.write(`  ${((us / total) * 100).toFixed(1).padStart(5)} %  ${k}\n`);
}

top((n) => where(n.callFrame.url), 'self time by file');
top(
  (n) => `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`,
  'self time by function',
);

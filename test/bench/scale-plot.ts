/**
 * The scale bench's plot (`docs/scaling.svg`), drawn as SVG text: checks per second (asked and done) and the engine's
 * CPU per check (`holdfast run`, `holdfast worker`, both) against the number of consumers, all on log axes. The points it
 * was drawn from are kept in the file itself (`<metadata>`, as JSON), so that a run of some sizes redraws the plot with
 * the others' points kept.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface ScalePoint {
  consumers: number;
  askedPerSec: number;
  donePerSec: number;
  cpuMsPerCheck: { run: number; worker: number; engine: number };
  lateP99Ms: number;
  /** The day of the run (YYYY-MM-DD) and the commit measured. */
  day: string;
  commit: string;
}

const METADATA = /<metadata id="scale-points">([\s\S]*?)<\/metadata>/;

/** The points a plot drawn before holds (none if there is no file). */
export function readPoints(file: string): ScalePoint[] {
  if (!existsSync(file)) return [];
  const found = METADATA.exec(readFileSync(file, 'utf8'));
  return found ? (JSON.parse(found[1]!) as ScalePoint[]) : [];
}

/** `fresh` replaces the points of the same sizes; the plot of all is written to `file`. */
export function writePlot(file: string, fresh: readonly ScalePoint[]): ScalePoint[] {
  const sizes = new Set(fresh.map((p) => p.consumers));
  const points = [...readPoints(file).filter((p) => !sizes.has(p.consumers)), ...fresh].sort(
    (a, b) => a.consumers - b.consumers,
  );
  writeFileSync(file, drawPlot(points));
  return points;
}

const WIDTH = 760;
const PANEL = { left: 80, right: 200, top: 50, height: 220, gap: 80 };
const plotWidth = WIDTH - PANEL.left - PANEL.right;
const COLOURS = { asked: '#888888', done: '#1f5fa8', engine: '#b3361b', run: '#d98b22', worker: '#5b8c2a' };

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fixed = (n: number) => Math.round(n * 10) / 10;
const decades = (values: readonly number[]) => ({
  low: Math.floor(Math.log10(Math.min(...values))),
  high: Math.ceil(Math.log10(Math.max(...values))),
});
const countText = (n: number) =>
  n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : n >= 1 ? String(n) : String(Number(n.toPrecision(2)));

interface Axis {
  at: (value: number) => number;
  ticks: number[];
  label: (value: number) => string;
}

function logAxis(values: readonly number[], from: number, length: number, upwards: boolean): Axis {
  const { low, high } = decades(values);
  const span = Math.max(1, high - low);
  const at = (v: number) => {
    const share = (Math.log10(v) - low) / span;
    return fixed(upwards ? from + length - share * length : from + share * length);
  };
  const ticks = Array.from({ length: span + 1 }, (_, i) => 10 ** (low + i));
  return { at, ticks, label: countText };
}

function frame(top: number, x: Axis, y: Axis, title: string): string[] {
  const bottom = top + PANEL.height;
  const right = PANEL.left + plotWidth;
  const out = [`<text x="${PANEL.left}" y="${top - 14}" class="title">${esc(title)}</text>`];
  out.push(`<rect x="${PANEL.left}" y="${top}" width="${plotWidth}" height="${PANEL.height}" class="frame"/>`);
  for (const t of y.ticks) {
    const at = y.at(t);
    out.push(`<line x1="${PANEL.left}" x2="${right}" y1="${at}" y2="${at}" class="grid"/>`);
    out.push(`<text x="${PANEL.left - 6}" y="${at + 4}" text-anchor="end">${y.label(t)}</text>`);
  }
  for (const t of x.ticks) {
    const at = x.at(t);
    out.push(`<line x1="${at}" x2="${at}" y1="${top}" y2="${bottom}" class="grid"/>`);
    out.push(`<text x="${at}" y="${bottom + 16}" text-anchor="middle">${x.label(t)}</text>`);
  }
  out.push(`<text x="${PANEL.left + plotWidth / 2}" y="${bottom + 34}" text-anchor="middle">consumers</text>`);
  return out;
}

interface Series {
  name: string;
  colour: string;
  dash?: string;
  value: (p: ScalePoint) => number;
  label?: (p: ScalePoint) => string;
}

function series(points: readonly ScalePoint[], x: Axis, y: Axis, s: Series): string[] {
  const xy = points.map((p) => [x.at(p.consumers), y.at(s.value(p))] as const);
  const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
  const out = [
    `<polyline points="${xy.map(([a, b]) => `${a},${b}`).join(' ')}" fill="none" stroke="${s.colour}" stroke-width="2"${dash}/>`,
  ];
  xy.forEach(([a, b], i) => {
    out.push(`<circle cx="${a}" cy="${b}" r="3.5" fill="${s.colour}"/>`);
    if (s.label)
      out.push(
        `<text x="${a + 6}" y="${Math.round((b - 7) * 10) / 10}" fill="${s.colour}">${esc(s.label(points[i]!))}</text>`,
      );
  });
  return out;
}

function legend(top: number, all: readonly Series[]): string[] {
  const x = PANEL.left + plotWidth + 18;
  return all.flatMap((s, i) => {
    const y = top + 14 + i * 20;
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    return [
      `<line x1="${x}" x2="${x + 24}" y1="${y - 4}" y2="${y - 4}" stroke="${s.colour}" stroke-width="2"${dash}/>`,
      `<text x="${x + 30}" y="${y}">${esc(s.name)}</text>`,
    ];
  });
}

function panel(points: readonly ScalePoint[], top: number, y: Axis, title: string, all: Series[]): string[] {
  const x = logAxis(
    points.map((p) => p.consumers),
    PANEL.left,
    plotWidth,
    false,
  );
  return [...frame(top, x, y, title), ...all.flatMap((s) => series(points, x, y, s)), ...legend(top, all)];
}

const percentDone = (p: ScalePoint) =>
  `${Math.round(p.donePerSec).toLocaleString('en')}/s (${Math.round((100 * p.donePerSec) / p.askedPerSec)} %)`;

/** The whole SVG document for these points (sorted by consumers). */
export function drawPlot(points: readonly ScalePoint[]): string {
  const rates: Series[] = [
    { name: 'asked: consumers / 60 s', colour: COLOURS.asked, dash: '6 4', value: (p) => p.askedPerSec },
    { name: 'done', colour: COLOURS.done, value: (p) => p.donePerSec, label: percentDone },
  ];
  const cpu: Series[] = [
    {
      name: 'run + worker',
      colour: COLOURS.engine,
      value: (p) => p.cpuMsPerCheck.engine,
      label: (p) => `${Number(p.cpuMsPerCheck.engine.toPrecision(2))}`,
    },
    { name: 'holdfast run', colour: COLOURS.run, dash: '6 4', value: (p) => p.cpuMsPerCheck.run },
    { name: 'holdfast worker', colour: COLOURS.worker, dash: '2 3', value: (p) => p.cpuMsPerCheck.worker },
  ];
  const secondTop = PANEL.top + PANEL.height + PANEL.gap;
  const height = secondTop + PANEL.height + 70;
  const rateAxis = logAxis(
    points.flatMap((p) => [p.askedPerSec, Math.max(p.donePerSec, 1)]),
    PANEL.top,
    PANEL.height,
    true,
  );
  const cpuAxis = logAxis(
    points.flatMap((p) => [p.cpuMsPerCheck.engine, p.cpuMsPerCheck.run, p.cpuMsPerCheck.worker]),
    secondTop,
    PANEL.height,
    true,
  );
  const days = [...new Set(points.map((p) => `${p.day} (${p.commit})`))].join(', ');
  const json = JSON.stringify(points).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<metadata id="scale-points">${json}</metadata>`,
    '<style>.frame{fill:none;stroke:#444}.grid{stroke:#ddd}.title{font-size:14px;font-weight:bold}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="white"/>`,
    ...panel(points, PANEL.top, rateAxis, 'Routine checks per second, verifyEvery 60 s (log scale)', rates),
    ...panel(
      points,
      secondTop,
      cpuAxis,
      "Engine CPU per check, ms (log scale): each process's CPU over the checks done",
      cpu,
    ),
    `<text x="${PANEL.left}" y="${height - 12}" fill="#666">holdfast run + one holdfast worker on 2 cores; measured ${esc(days)}; npx tsx test/bench/scale.ts</text>`,
    '</svg>',
    '',
  ].join('\n');
}

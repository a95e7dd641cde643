/**
 * A log-log line chart as a standalone SVG file (no dependencies): the doc-size scaling curve that
 * `npm run bench` writes to bench/doc-size-scaling.svg and the README shows.
 */

export interface Series {
  name: string;
  color: string;
  points: readonly { x: number; y: number }[];
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
}

const WIDTH = 720;
const HEIGHT = 440;
const MARGIN = { left: 80, right: 170, top: 50, bottom: 60 };

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Powers of ten covering [min, max]. */
function decades(min: number, max: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
  return out;
}

function label(value: number): string {
  if (value >= 1) return value.toLocaleString('en-US');
  return String(Number(value.toPrecision(1)));
}

export function logLogChart(options: ChartOptions): string {
  const all = options.series.flatMap((s) => s.points);
  const xs = decades(Math.min(...all.map((p) => p.x)), Math.max(...all.map((p) => p.x)));
  const ys = decades(Math.min(...all.map((p) => p.y)), Math.max(...all.map((p) => p.y)));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const lx = (x: number) => (Math.log10(x) - Math.log10(xs[0])) / (Math.log10(xs[xs.length - 1]) - Math.log10(xs[0]));
  const ly = (y: number) => (Math.log10(y) - Math.log10(ys[0])) / (Math.log10(ys[ys.length - 1]) - Math.log10(ys[0]));
  const px = (x: number) => (MARGIN.left + lx(x) * plotW).toFixed(1);
  const py = (y: number) => (MARGIN.top + (1 - ly(y)) * plotH).toFixed(1);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="13">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2 - MARGIN.right / 2}" y="28" text-anchor="middle" font-size="16" font-weight="bold">${escape(options.title)}</text>`,
  ];
  for (const x of xs) {
    parts.push(`<line x1="${px(x)}" y1="${MARGIN.top}" x2="${px(x)}" y2="${MARGIN.top + plotH}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${px(x)}" y="${MARGIN.top + plotH + 20}" text-anchor="middle">${label(x)}</text>`);
  }
  for (const y of ys) {
    parts.push(`<line x1="${MARGIN.left}" y1="${py(y)}" x2="${MARGIN.left + plotW}" y2="${py(y)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${MARGIN.left - 8}" y="${py(y)}" text-anchor="end" dominant-baseline="middle">${label(y)}</text>`);
  }
  parts.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  parts.push(`<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 15}" text-anchor="middle">${escape(options.xLabel)}</text>`);
  parts.push(
    `<text x="20" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 20 ${MARGIN.top + plotH / 2})">${escape(options.yLabel)}</text>`,
  );
  options.series.forEach((series, i) => {
    const path = series.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p.x)},${py(p.y)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${series.color}" stroke-width="2.5"/>`);
    for (const p of series.points) parts.push(`<circle cx="${px(p.x)}" cy="${py(p.y)}" r="4" fill="${series.color}"/>`);
    const ly0 = MARGIN.top + 10 + i * 24;
    const lx0 = MARGIN.left + plotW + 16;
    parts.push(`<line x1="${lx0}" y1="${ly0}" x2="${lx0 + 24}" y2="${ly0}" stroke="${series.color}" stroke-width="2.5"/>`);
    parts.push(`<text x="${lx0 + 32}" y="${ly0}" dominant-baseline="middle">${escape(series.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

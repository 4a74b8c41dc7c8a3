// Line charts for the benchmarks: drawn as SVG here, rasterised to PNG by the
// Chromium the end-to-end tests use (scripts/chromium.sh installs it; driven
// through playwright-core), so a run leaves a picture beside its numbers.
import { existsSync, writeFileSync } from 'node:fs';

const WIDTH = 960;
const HEIGHT = 600;
const PLOT = { left: 90, right: 280, top: 60, bottom: 70 };
const CHROMIUM = process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium';

const escapeXml = (text) => String(text).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]);

/** Ticks of a log axis over [lo, hi]: 1, 2 and 5 times each power of ten inside it. */
function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push(v);
    }
  }
  return ticks;
}

/** Bounds of a log axis around `values`, widened to whole 1-2-5 steps. */
function logBounds(values) {
  const steps = [1, 2, 5, 10];
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const e0 = Math.floor(Math.log10(lo));
  const down = [...steps].reverse().map((m) => m * 10 ** e0).find((v) => v <= lo) ?? 10 ** e0;
  const e1 = Math.floor(Math.log10(hi));
  const up = steps.map((m) => m * 10 ** e1).find((v) => v >= hi) ?? 10 ** (e1 + 1);
  return [down, up];
}

const format = (v) => (v >= 1000 ? `${v / 1000}k` : v >= 1 ? String(v) : v.toPrecision(1));

/**
 * An SVG line chart, both axes logarithmic. `series`: { name, color, dash?, points: [[x, y], ...],
 * notes?: [[x, y, text], ...] }; a series with one point and `horizontal: true` is drawn across the
 * whole plot.
 */
export function lineChartSvg({ title, subtitle, xLabel, yLabel, series }) {
  const xs = series.flatMap((s) => (s.horizontal ? [] : s.points.map(([x]) => x)));
  const ys = series.flatMap((s) => s.points.map(([, y]) => y)).filter((y) => y > 0);
  const [x0, x1] = [Math.min(...xs) / 1.25, Math.max(...xs) * 1.25];
  // One 1-2-5 step of room under the lowest value, so a line there is not drawn on the axis.
  const [y0, y1] = logBounds([Math.min(...ys) / 1.5, ...ys]);
  const w = WIDTH - PLOT.left - PLOT.right;
  const h = HEIGHT - PLOT.top - PLOT.bottom;
  const sx = (x) => PLOT.left + ((Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * w;
  const sy = (y) => PLOT.top + h - ((Math.log10(Math.max(y, y0)) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * h;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="DejaVu Sans, Arial, sans-serif">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`);
  out.push(`<text x="${WIDTH / 2 - PLOT.right / 2 + PLOT.left / 2}" y="28" font-size="18" font-weight="bold" text-anchor="middle">${escapeXml(title)}</text>`);
  if (subtitle) out.push(`<text x="${WIDTH / 2 - PLOT.right / 2 + PLOT.left / 2}" y="48" font-size="12" fill="#555" text-anchor="middle">${escapeXml(subtitle)}</text>`);
  // Grid and ticks.
  for (const y of logTicks(y0, y1)) {
    out.push(`<line x1="${PLOT.left}" x2="${PLOT.left + w}" y1="${sy(y)}" y2="${sy(y)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${PLOT.left - 8}" y="${sy(y) + 4}" font-size="12" text-anchor="end">${format(y)}</text>`);
  }
  const xTicks = [...new Set(xs)].sort((a, b) => a - b);
  for (const x of xTicks) {
    out.push(`<line x1="${sx(x)}" x2="${sx(x)}" y1="${PLOT.top}" y2="${PLOT.top + h}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${sx(x)}" y="${PLOT.top + h + 18}" font-size="12" text-anchor="middle">${format(x)}</text>`);
  }
  out.push(`<rect x="${PLOT.left}" y="${PLOT.top}" width="${w}" height="${h}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${PLOT.left + w / 2}" y="${HEIGHT - 22}" font-size="14" text-anchor="middle">${escapeXml(xLabel)}</text>`);
  out.push(`<text transform="translate(24 ${PLOT.top + h / 2}) rotate(-90)" font-size="14" text-anchor="middle">${escapeXml(yLabel)}</text>`);
  // Series, then the legend.
  for (const s of series) {
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    if (s.horizontal) {
      const y = sy(s.points[0][1]);
      out.push(`<line x1="${PLOT.left}" x2="${PLOT.left + w}" y1="${y}" y2="${y}" stroke="${s.color}" stroke-width="2"${dash}/>`);
      continue;
    }
    const points = s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${points}" fill="none" stroke="${s.color}" stroke-width="2.5"${dash}/>`);
    for (const [x, y] of s.points) out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="4" fill="${s.color}"/>`);
    for (const [x, y, note] of s.notes ?? []) {
      // Above the point, towards the middle of the plot, on a white halo so lines under it do not hide it.
      const left = sx(x) > PLOT.left + w / 2;
      out.push(`<text x="${(sx(x) + (left ? -8 : 8)).toFixed(1)}" y="${(sy(y) - 10).toFixed(1)}" font-size="12" fill="${s.color}" text-anchor="${left ? 'end' : 'start'}" stroke="white" stroke-width="4" paint-order="stroke">${escapeXml(note)}</text>`);
    }
  }
  const lx = PLOT.left + w + 20;
  out.push(`<text x="${lx}" y="${PLOT.top + 4}" font-size="13" font-weight="bold">Legend</text>`);
  series.forEach((s, i) => {
    const y = PLOT.top + 26 + i * 24;
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    out.push(`<line x1="${lx}" x2="${lx + 34}" y1="${y}" y2="${y}" stroke="${s.color}" stroke-width="2.5"${dash}/>`);
    out.push(`<text x="${lx + 42}" y="${y + 4}" font-size="12">${escapeXml(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

/**
 * Writes `svg` to `svgPath` and its rendering to `pngPath`. Returns the PNG's
 * path, or null (with the reason on stderr) when no Chromium is installed.
 */
export async function writeChart(svg, svgPath, pngPath) {
  writeFileSync(svgPath, svg);
  if (!existsSync(CHROMIUM)) {
    console.error(`no Chromium at ${CHROMIUM} (bash scripts/chromium.sh installs it): chart left as SVG only, ${svgPath}`);
    return null;
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT }, deviceScaleFactor: 2 });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path: pngPath });
  } finally {
    await browser.close();
  }
  return pngPath;
}

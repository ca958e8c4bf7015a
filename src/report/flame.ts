// A differential flame graph as inline SVG for the HTML report (no script: the report's CSP
// allows none but its own, and a <title> per frame is the tooltip). Drawn as an icicle: the
// thread kinds on top, callees below; a frame's width is its share of the candidate's samples, its colour how that
// share changed against the reference: red = more time in the candidate, blue = less. Frame names
// are data and go through html().
import { flameTree, type FlameGraph, type FlameNode, topShifts, total } from '../metrics/flame';
import { html as h } from './escape';

const WIDTH = 1100;
const ROW = 16;
/** Frames narrower than this (px) are not drawn; their time is still in their parent. */
const MIN_PX = 1.5;
/** Deeper frames are not drawn (perf keeps up to 127; the wide part is near the top). */
const MAX_DEPTH = 60;

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

function colour(delta: number): string {
  if (Math.abs(delta) < 0.002) return 'rgb(236,236,236)';
  // ±10 points of share saturates the colour.
  const k = Math.min(1, Math.abs(delta) / 0.1);
  const [r, g, b] = delta > 0 ? [255, Math.round(235 - 160 * k), Math.round(225 - 185 * k)] : [Math.round(230 - 170 * k), Math.round(235 - 120 * k), 255];
  return `rgb(${r},${g},${b})`;
}

/** The SVG of one flame graph; undefined when either side has no samples. */
export function flameSvg(f: FlameGraph): string | undefined {
  const [tc, tb] = [total(f.candidate), total(f.baseline)];
  if (!tc || !tb) return undefined;
  const root = flameTree(f.candidate, f.baseline);
  const rects: string[] = [];
  let depth = 0;
  const draw = (n: FlameNode, x: number, level: number) => {
    const w = (n.candidate / tc) * WIDTH;
    if ((w < MIN_PX && level > 0) || level > MAX_DEPTH) return;
    depth = Math.max(depth, level);
    const [sc, sb] = [n.candidate / tc, n.baseline / tb];
    const title = `${n.name}: ${pct(sc)} of ${f.candidateLabel}'s samples, ${pct(sb)} of ${f.baselineLabel}'s (${sc >= sb ? '+' : '−'}${(Math.abs(sc - sb) * 100).toFixed(1)} points)`;
    rects.push(
      `<g><title>${h(title)}</title><rect x="${x.toFixed(1)}" y="${level * ROW}" width="${w.toFixed(1)}" height="${ROW - 1}" fill="${colour(sc - sb)}"/>` +
        (w > 40 ? `<text x="${(x + 3).toFixed(1)}" y="${level * ROW + 11}" font-size="11" font-family="monospace">${h(n.name.slice(0, Math.floor(w / 7)))}</text>` : '') +
        '</g>',
    );
    let cx = x;
    for (const c of n.children) {
      draw(c, cx, level + 1);
      cx += (c.candidate / tc) * WIDTH;
    }
  };
  draw(root, 0, 0);
  const height = (depth + 1) * ROW;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="differential flame graph">${rects.join('')}</svg>`;
}

/** "$rabbit_channel:handle_cast/2 31.2 % (was 24.0 %)": the frames whose share moved most. */
export function flameShiftLines(f: FlameGraph, max = 3): string[] {
  return topShifts(f.candidate, f.baseline, max).map((s) => `${s.frame} ${pct(s.candidateShare)} of samples (was ${pct(s.baselineShare)})`);
}

/** The HTML section of a scenario's flame graph. */
export function flameSection(f: FlameGraph): string {
  const svg = flameSvg(f);
  if (!svg) return '';
  const shifts = flameShiftLines(f, 5);
  return (
    `<h3>Differential flame graph</h3><div class="small muted">perf samples of one extra trial on each target (node 1, +JPperf true, scheduler threads merged): ` +
    `${h(String(total(f.candidate)))} on ${h(f.candidateLabel)}, ${h(String(total(f.baseline)))} on ${h(f.baselineLabel)}; width: share of ${h(f.candidateLabel)}'s samples; ` +
    `red: more time than on ${h(f.baselineLabel)}, blue: less; hover a frame for its shares</div>${svg}` +
    (shifts.length ? `<ul class="small">${shifts.map((l) => `<li><code>${h(l)}</code></li>`).join('')}</ul>` : '')
  );
}

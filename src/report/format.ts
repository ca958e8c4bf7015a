// Number and verdict formatting shared by every report format.
import type { Comparison, Verdict } from '../schema/types';

export const VERDICT_ICON: Record<Verdict, string> = { pass: '✅', warn: '⚠️', fail: '❌', inconclusive: '❔' };

export function num(x: number | null | undefined, unit = ''): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  const s = a >= 1000 ? Math.round(x).toLocaleString('en-US') : a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  return unit ? `${s} ${unit}` : s;
}

export function pct(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '–';
  const d = (r - 1) * 100;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(1)} %`;
}

/** "−6.8 % [−9.0, −4.7]" */
export function delta(c: Comparison): string {
  if (c.ratio === null) return '–';
  if (c.ciLow === null || c.ciHigh === null) return pct(c.ratio);
  const b = (r: number) => ((r - 1) * 100).toFixed(1).replace('-', '−');
  return `${pct(c.ratio)} [${b(c.ciLow)}, ${b(c.ciHigh)}]`;
}

// Holm–Bonferroni multiple-comparison adjustment (Holm 1979) for the p-values of one gate
// run (scenarios × metrics). Pure function, no I/O.

/**
 * Holm step-down adjusted p-values, returned in the same order as the input.
 * adjusted(i) = max over j ≤ rank(i) of min(1, (m − j + 1) · p(j)), with p(j) sorted ascending;
 * this matches R's `p.adjust(p, "holm")`. The result is monotone in p and capped at 1.
 * Throws RangeError for a value outside [0, 1] (including NaN). An empty input gives [].
 */
export function holm(pValues: readonly number[]): number[] {
  for (const p of pValues) {
    if (!(p >= 0 && p <= 1)) throw new RangeError(`holm: p-value out of range: ${p}`);
  }
  const m = pValues.length;
  // Stable ascending order (ties keep input order; they get the same adjusted value anyway).
  const order = pValues.map((_, i) => i).sort((a, b) => pValues[a] - pValues[b] || a - b);
  const adjusted = new Array<number>(m);
  let running = 0;
  for (let r = 0; r < m; r++) {
    const i = order[r];
    running = Math.max(running, Math.min(1, (m - r) * pValues[i]));
    adjusted[i] = running;
  }
  return adjusted;
}

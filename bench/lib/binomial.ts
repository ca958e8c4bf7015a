// Binomial confidence intervals for the bench scripts' rates (false fails, detections).

/** Clopper-Pearson exact 95 % interval for k successes in n (bisection on the binomial tails). */
export function clopperPearson(k: number, total: number): [number, number] {
  const cdf = (p: number, upTo: number) => {
    let s = 0;
    let term = (1 - p) ** total;
    for (let i = 0; i <= upTo; i++) {
      s += term;
      term *= ((total - i) / (i + 1)) * (p / (1 - p));
    }
    return s;
  };
  const solve = (f: (p: number) => number) => {
    let lo = 0;
    let hi = 1;
    for (let i = 0; i < 60; i++) {
      const mid = (lo + hi) / 2;
      if (f(mid) > 0) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const low = k === 0 ? 0 : solve((p) => (1 - cdf(p, k - 1) < 0.025 ? 1 : -1));
  const high = k === total ? 1 : solve((p) => (cdf(p, k) > 0.025 ? 1 : -1));
  return [low, high];
}

// What moved inside the broker, for every report format: the few evidence changes (the broker's
// CPU, GC, scheduler split, memory by category; src/metrics/evidence.ts) that stand next to a
// failing or warned gating metric, and which evidence each target could not provide. The evidence
// comparisons themselves come from judge() (src/compare/judge.ts), paired like the metrics.
import type { Comparison, RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { delta } from './format';

/** A change whose interval excludes "no change". */
export const significant = (c: Comparison): boolean => c.ratio !== null && c.ciLow !== null && c.ciHigh !== null && (c.ciLow > 1 || c.ciHigh < 1);

/** A share of scheduler time below this on both sides is too small to explain a regression, however
 *  much it moved in relative terms (aux 1 % → 0.5 % is −50 %). */
const MIN_SHARE = 0.05;

/** The largest significant evidence changes of a scenario against one reference, largest first. */
export function topEvidence(r: RunReport, scenario: string, against: string, max = 4): Comparison[] {
  const material = (c: Comparison) => c.unit !== 'share' || Math.max(c.baselineMedian ?? 0, c.candidateMedian ?? 0) >= MIN_SHARE;
  return (r.evidence ?? [])
    .filter((c) => c.scenario === scenario && c.against === against && significant(c) && material(c))
    .sort((a, b) => Math.abs(Math.log(b.ratio!)) - Math.abs(Math.log(a.ratio!)))
    .slice(0, max);
}

/** "GCs per 1000 messages +42.0 % [31.0, 55.0]" */
export const evidenceText = (c: Comparison): string => `${metricDef(c.metric).label} ${delta(c)}`;

/** Per failing or warned gating scenario (and reference): its evidence lines, or why there are none. */
export function evidenceForRegressions(r: RunReport): Array<{ scenario: string; against: string; baselineLabel: string; lines: string[]; none?: string }> {
  const seen = new Set<string>();
  const out: ReturnType<typeof evidenceForRegressions> = [];
  for (const c of r.comparisons) {
    if (!c.gating || (c.verdict !== 'fail' && c.verdict !== 'warn') || c.against === 'stored') continue;
    const key = `${c.scenario}\u0000${c.against}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const any = (r.evidence ?? []).some((e) => e.scenario === c.scenario && e.against === c.against);
    const top = topEvidence(r, c.scenario, c.against);
    out.push({
      scenario: c.scenario,
      against: c.against,
      baselineLabel: c.baselineLabel,
      lines: top.map(evidenceText),
      ...(top.length ? {} : { none: any ? 'no broker evidence moved significantly' : "no broker evidence recorded for this scenario (see the targets' evidence below)" }),
    });
  }
  return out;
}

/** "label: no cgroup (why); …" per target that lacks an evidence source. */
export function evidenceGaps(r: RunReport): string[] {
  return (r.targets ?? [])
    .filter((t) => t.evidence?.missing.length)
    .map((t) => `${t.label}: ${t.evidence!.missing.map((m) => `no ${m.source === 'all' ? 'broker' : m.source} evidence (${m.why})`).join('; ')}`);
}

// The verdict rules of a run, in one place (the pipeline, the shard merge and the CLI's `compare`
// all call judge()): a same-run reference decides when there is one, paired by round, and a
// stored baseline's comparison is then shown but not gating; otherwise an independent reference
// (the stored baseline, or another run's report) decides, and may warn but never fail when the
// runner or trial length differs (`mayNotFail`); nothing to compare with gives no verdict of its
// own; and missing data (a run stopped early) is never a pass nor green. The run's answer
// (regression, no regression of X % or more, not decided) comes from the same comparisons. Broker evidence (what moved inside
// the broker) is compared alongside in a same-run A/B, paired like the metrics, and never gates.
import type { Comparison, RunReport, ScenarioSpec, TrialResult, Verdict } from '../schema/types';
import { compareSameRun, compareSamples, countChanges, overallAnswer, overallVerdict, type Sample } from './compare';

export interface JudgeInput {
  scenarios: ScenarioSpec[];
  trials: TrialResult[];
  candidate: Sample & { id: string };
  /** A target measured in the same run: decides, paired by round; `how` follows its label in
   *  decidedBy; `level`: a sequential A/B's nominal level and Bonferroni family (sequential.ts). */
  sameRun?: { id: string; label: string; how?: string; level?: { alpha: number; bonferroni: number } };
  /** A sample from elsewhere (the stored baseline, another run): decides when there is no sameRun. */
  independent?: {
    sample: Sample;
    /** 'stored', or the id the reference's comparisons carry. */
    against: string;
    /** Why a fail may only warn (runner or trial length differ). */
    mayNotFail?: string;
    /** "stored baseline" or "a.json compared with b.json": the decidedBy text's subject. */
    what: string;
    /** Appended to `what` when nothing limits the verdict, e.g. ", recorded on a matching runner". */
    matching?: string;
  };
  /** False for a refresh without a reference: the run is recorded, not judged (a pass). */
  judged: boolean;
  /** A run-level problem (stopped early): the verdict cannot be a pass. */
  incomplete: boolean;
  /** Appended to decidedBy, e.g. ", merged from 3 shards". */
  suffix?: string;
}

export type Judgement = Pick<RunReport, 'comparisons' | 'decidedBy' | 'verdict' | 'answer' | 'regressions' | 'improvements' | 'evidence'>;

/** The trials' broker evidence compared like reported-only metrics: paired by round, 90 % CI. */
function compareEvidence(i: JudgeInput, reference: { id: string; label: string }): Comparison[] {
  const trials = i.trials.map((t) => ({ ...t, metrics: t.evidence ?? {} }));
  if (!trials.some((t) => t.evidence)) return [];
  const out = compareSameRun(i.scenarios, trials, { id: i.candidate.id, label: i.candidate.label }, reference);
  // Never gating: scenario files cannot list evidence under gate:. Evidence a pair of targets does
  // not move at all (no disk I/O: 0 and 0) has no ratio to show.
  return out.filter((c) => c.ratio !== null);
}

export function judge(i: JudgeInput): Judgement {
  let comparisons: Comparison[] = [];
  let decidedBy = 'nothing: no baseline to compare with';
  if (i.sameRun) {
    comparisons = compareSameRun(i.scenarios, i.trials, { id: i.candidate.id, label: i.candidate.label }, i.sameRun, i.sameRun.level);
    decidedBy = `same-run A/B against ${i.sameRun.label}${i.sameRun.how ?? ''}`;
  }
  if (i.independent) {
    const x = i.independent;
    const vs = compareSamples({ scenarios: i.scenarios, candidate: i.candidate, reference: x.sample, against: x.against, mayNotFail: x.mayNotFail });
    if (i.sameRun) {
      for (const c of vs) c.gating = false;
      comparisons.push(...vs);
    } else {
      comparisons = vs;
      decidedBy = x.mayNotFail ? `${x.what} (may warn, never fail: ${x.mayNotFail})` : `${x.what}${x.matching ?? ''}`;
    }
  }
  const judged: Verdict = i.judged ? overallVerdict(comparisons) : 'pass';
  const answer = overallAnswer(comparisons);
  const evidence = i.sameRun ? compareEvidence(i, i.sameRun) : [];
  return {
    comparisons,
    ...(evidence.length ? { evidence } : {}),
    decidedBy: decidedBy + (i.suffix ?? ''),
    verdict: judged === 'pass' && i.incomplete ? 'inconclusive' : judged,
    // A run stopped early is never green: what did not run was not ruled out.
    ...(i.judged ? { answer: answer === 'no-regression' && i.incomplete ? ('undecided' as const) : answer } : {}),
    ...countChanges(comparisons),
  };
}

/** A run-level error's scope (a shard's errors are prefixed "shard i: "). */
export const isRunScope = (scope: string): boolean => scope === 'run' || scope.endsWith(': run');

// `report` (a finished report.json as a table, Markdown, JSON or HTML) and `compare` (a report
// against another run's report or a stored baseline.json, judged by the same rules as a run).
import type { RunReport } from '../schema/types';
import { GateError } from '../schema/errors';
import { trialValues } from '../compare/baseline-file';
import { isRunScope, judge } from '../compare/judge';
import { renderSummary } from '../report/markdown';
import { fingerprintMismatch } from '../metrics/fingerprint';
import { readStored } from '../compare/stored';
import { emit, type Values } from './shared';

export function reportCommand(file: string, v: Values): number {
  const { report } = readStored(file);
  if (!report) throw new GateError('this is a baseline.json, not a report', { file }, `compare a run with it: rabbitmq-perf-gate compare REPORT.json ${file}`);
  emit(report, { ...v, json: v.json }, () => renderSummary(report, { name: 'rabbitmq-perf-gate' }));
  return 0;
}

export function compareCommand(files: string[], v: Values): number {
  let [a, b] = files.map((f) => ({ file: f, ...readStored(f) }));
  if (a.baseline && b.report) [a, b] = [b, a]; // a baseline is always the reference
  const cand = a.report;
  if (!cand) throw new GateError('compare needs at least one report.json', { file: a.file }, 'compare NEW/report.json OLD/report.json, or NEW/report.json baseline.json');
  const candTarget = cand.targets.find((t) => t.id === cand.candidate);
  const candidate = { label: candTarget?.label ?? cand.candidate, values: trialValues(cand, cand.candidate) };
  const refReport = b.report;
  const refId = refReport ? (cand.targets.some((t) => t.id === 'reference') ? 'reference-run' : 'reference') : 'stored';
  const refTarget = refReport ? refReport.targets.find((t) => t.id === refReport.candidate) : b.baseline!.target;
  const reference = refReport
    ? { label: `${refTarget?.label ?? refReport.candidate} (${b.file})`, values: trialValues(refReport, refReport.candidate) }
    : { label: 'stored baseline', values: Object.fromEntries(Object.entries(b.baseline!.scenarios).map(([k, s]) => [k, s.metrics])) };
  const mismatch = candTarget ? fingerprintMismatch((refReport ?? b.baseline!).fingerprint, refTarget, cand.fingerprint, candTarget) : undefined;
  const judgement = judge({
    scenarios: cand.scenarios,
    trials: cand.trials,
    candidate: { id: cand.candidate, ...candidate },
    independent: { sample: reference, against: refId, mayNotFail: mismatch, what: `${a.file} compared with ${b.file}` },
    judged: true,
    incomplete: cand.errors.some((e) => isRunScope(e.scope)),
  });
  const report: RunReport = {
    ...cand,
    mode: 'check',
    ...judgement,
    // Two reports: both runs' judged trials side by side, so the HTML shows the A/B layout.
    targets: [...cand.targets.filter((t) => t.id === cand.candidate), ...(refReport && refTarget ? [{ ...refTarget, id: refId, label: reference.label }] : [])],
    trials: [...cand.trials.filter((t) => t.target === cand.candidate), ...(refReport ? refReport.trials.filter((t) => t.target === refReport.candidate).map((t) => ({ ...t, target: refId })) : [])],
  };
  emit(report, v, () => renderSummary(report, { name: 'rabbitmq-perf-gate' }));
  return report.verdict === 'fail' ? 1 : 0;
}

// The bisect search without a broker: the ends check first (no regression between the ends ends
// the search; a regression sizes the threshold later steps are judged at), which image comes next,
// what each verdict makes of it, skips and undecided images, the state file (resume, another search's file, a broken one), the
// time limit and an interruption, and the ⌈log₂ N⌉ + 1 bound for every culprit position. The A/B
// is a function here (the pipeline in the real thing: test/integration/bisect.test.ts); its
// verdicts are scripted per image.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type AbRequest,
  bisectStatus,
  calibrationOf,
  calibrationText,
  newState,
  nextProbe,
  openState,
  outcomeOf,
  saveState,
  searchBisect,
  type SearchDeps,
  stepDesign,
  stepFromReport,
} from '../../src/compare/bisect';
import type { BisectReport, BisectState, Comparison, RunReport, Verdict } from '../../src/schema/types';
import { bisectHeadline } from '../../src/report/bisect';
import { GateError } from '../../src/schema/errors';
import { prepare } from '../../src/pipeline/prepare';
import { marginsFor } from '../../src/compare/margins';

const dir = mkdtempSync(join(tmpdir(), 'bisect-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const images = (n: number) => Array.from({ length: n }, (_, i) => ({ image: `my/rabbitmq:t${i + 1}` }));
const def = (n = 8) => ({ images: images(n), scenarios: 'one_fast', duration: 2, warmup: 1, looks: [8, 12] });

/** A finished A/B's report as the pipeline gives it, with one paired gating comparison. */
function report(verdict: Verdict, ratio: number, extra: Partial<RunReport> = {}): RunReport {
  const c: Comparison = {
    scenario: 'one_fast',
    metric: 'consumed_rate',
    unit: 'msg/s',
    direction: 'higher',
    against: 'good-end',
    baselineLabel: 'good',
    candidateLabel: 'cand',
    nBaseline: 8,
    nCandidate: 8,
    baselineMedian: 1000,
    candidateMedian: 1000 * ratio,
    ratio,
    ciLow: ratio * 0.95,
    ciHigh: ratio * 1.05,
    pValue: 0.01,
    pAdjusted: 0.01,
    tolerance: 0.1,
    change: 'same',
    verdict,
    reason: `the rule said ${verdict}`,
    gating: true,
    paired: true,
  };
  return {
    verdict,
    comparisons: [c],
    errors: [],
    seed: 7,
    repetitions: 12,
    sequential: { looks: [8, 12], level: 0.03, family: 1, futility: 0.1, stopped: { one_fast: 8 }, fixedPairs: 12, savedSeconds: 0 },
    decidedBy: 'same-run A/B',
    ...extra,
  } as unknown as RunReport;
}

/** Scripted A/Bs: image position → verdicts in order (the last repeats); 'boot' throws a start failure. */
function deps(script: Record<number, Array<Verdict | 'boot'>>, over: Partial<SearchDeps> = {}): SearchDeps & { calls: AbRequest[] } {
  const calls: AbRequest[] = [];
  const bootError = new Error('container exited with code 1 while RabbitMQ was booting');
  return {
    calls,
    runAb: async (req) => {
      calls.push(req);
      const pos = Number(/t(\d+)$/.exec(req.image)![1]) - 1;
      const seen = calls.filter((c) => c.image === req.image).length - 1;
      const list = script[pos] ?? ['pass'];
      const v = list[Math.min(seen, list.length - 1)];
      if (v === 'boot') throw bootError;
      return report(v, v === 'fail' ? 0.8 : 1);
    },
    candidateFailed: (e) => e === bootError,
    save: () => undefined,
    log: () => undefined,
    describe: (e) => (e as Error).message,
    design: { looks: [8, 12] },
    timeLimitSeconds: 0,
    ...over,
  };
}

/** Images from `culprit` (0-based) on fail, the rest pass. */
const regressFrom = (n: number, culprit: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [i, [i >= culprit ? 'fail' : 'pass'] as Verdict[]]));

describe('bisect search', () => {
  it('verdicts map to outcomes: fail bad, pass good, warn and inconclusive undecided', () => {
    expect(['fail', 'pass', 'warn', 'inconclusive'].map((v) => outcomeOf(v as Verdict))).toEqual(['bad', 'good', 'undecided', 'undecided']);
    // With an answer: a significant slowdown inside the equivalence margin (warn, no-regression) is good.
    expect(outcomeOf('warn', 'no-regression')).toBe('good');
    expect(outcomeOf('warn', 'undecided')).toBe('undecided');
    expect(outcomeOf('fail', 'regression')).toBe('bad');
  });

  it('names the first bad image of 8 in at most ⌈log₂ 8⌉ + 1 = 4 verdicts, wherever it is', async () => {
    for (let culprit = 1; culprit <= 7; culprit++) {
      const d = deps(regressFrom(8, culprit));
      const { state, stopped } = await searchBisect(newState(def()), d);
      const st = bisectStatus(state);
      expect(stopped).toBeUndefined();
      expect(st.state, `culprit ${culprit}`).toBe('found');
      expect(st.culprit).toBe(culprit);
      expect(st.verdicts).toBeLessThanOrEqual(4);
      // Every A/B is against the good end.
      expect(new Set(d.calls.map((c) => c.reference))).toEqual(new Set(['my/rabbitmq:t1']));
    }
  });

  it('checks the ends first, then tries the middle (the lower one on a tie) and halves the range', async () => {
    const s = newState(def());
    expect(nextProbe(s)).toBe(7);
    const d = deps(regressFrom(8, 4));
    const { state } = await searchBisect(s, d);
    expect(state.steps.map((x) => [x.index, x.outcome, !!x.ends])).toEqual([
      [7, 'bad', true],
      [3, 'good', false],
      [5, 'bad', false],
      [4, 'bad', false],
    ]);
    expect(state.steps[1]).toMatchObject({ verdict: 'pass', metric: 'consumed_rate', ratio: 1, pairs: 8, looks: [8, 12], attempt: 1 });
  });

  it('the ends check sizes the step: later steps A/B the regressed scenarios only, judged at the geometric midpoint', async () => {
    const d = deps(regressFrom(8, 4));
    const { state } = await searchBisect(newState(def()), d);
    // The ends: a throughput at 0.8 of the good end is 1.25× worse; the midpoint √1.25 = 1.118.
    expect(d.calls[0]).not.toHaveProperty('thresholds');
    expect(calibrationOf(state)).toEqual({ thresholds: { one_fast: { consumed_rate: 0.118 } }, steps: [{ scenario: 'one_fast', metric: 'consumed_rate', ratio: 0.8, threshold: 0.118 }] });
    for (const c of d.calls.slice(1)) expect(c).toMatchObject({ scenarios: 'one_fast', thresholds: { one_fast: { consumed_rate: 0.118 } } });
    expect(bisectStatus(state)).toMatchObject({ state: 'found', culprit: 4, verdicts: 4, calibration: { thresholds: { one_fast: { consumed_rate: 0.118 } } } });
    expect(calibrationText(calibrationOf(state)!)).toBe(
      'one_fast consumed_rate −20.0 % between the ends; later steps A/B one_fast only, each judged at the midpoint of its step (11.8 %): worse than that is bad, a CI whose bad end stays inside it good',
    );
  });

  it('a significant slowdown at the ends inside the tolerance (warn) is the step: sized and searched', async () => {
    const d = deps(regressFrom(8, 4), {
      runAb: async (req) => {
        d.calls.push(req);
        const pos = Number(/t(\d+)$/.exec(req.image)![1]) - 1;
        // The ends: −7 %, significantly worse but not beyond the 10 % tolerance (warn; the run's answer
        // may even be "no regression of 10 % or more"); later images judged at the midpoint.
        if (pos === 7) return report('warn', 0.93, { answer: 'no-regression' } as Partial<RunReport>);
        return report(pos >= 4 ? 'fail' : 'pass', pos >= 4 ? 0.93 : 1);
      },
    });
    const { state } = await searchBisect(newState(def()), d);
    expect(state.steps[0]).toMatchObject({ index: 7, ends: true, outcome: 'bad', verdict: 'warn' });
    expect(state.steps[0]).not.toHaveProperty('note');
    expect(calibrationOf(state)!.thresholds).toEqual({ one_fast: { consumed_rate: 0.037 } });
    expect(bisectStatus(state)).toMatchObject({ state: 'found', culprit: 4 });
  });

  it('no regression between the ends: nothing to search, one verdict', async () => {
    const d = deps({ 7: ['pass'] });
    const { state, stopped } = await searchBisect(newState(def()), d);
    expect(stopped).toBeUndefined();
    expect(d.calls.map((c) => c.image)).toEqual(['my/rabbitmq:t8']);
    expect(bisectStatus(state)).toMatchObject({ state: 'no-regression', verdicts: 1, suspects: [] });
    const r = { kind: 'rabbitmq-perf-gate/bisect', tool: { name: 't', version: '0' }, createdAt: '', state, status: bisectStatus(state) } as BisectReport;
    expect(bisectHeadline(r)).toBe(
      'no regression between the ends: my/rabbitmq:t8 (8 of 8) is not significantly worse than my/rabbitmq:t1 (1 of 8) (one_fast consumed +0.0 % [−5.0, 5.0]), so there is nothing to search',
    );
    expect(nextProbe(state)).toBeUndefined();
  });

  it('an ends check still undecided after its attempts, or whose bad end cannot start, leaves later steps at the scenarios’ own margins', async () => {
    const undecided = deps({ ...regressFrom(8, 4), 7: ['inconclusive'] });
    const a = await searchBisect(newState(def()), undecided);
    expect(a.state.steps.slice(0, 2).map((x) => [x.index, x.outcome, x.attempt, x.ends])).toEqual([
      [7, 'undecided', 1, true],
      [7, 'undecided', 2, true],
    ]);
    expect(undecided.calls[1].looks).toEqual([8, 12, 24]);
    expect(undecided.calls[2]).toMatchObject({ image: 'my/rabbitmq:t4' });
    expect(undecided.calls[2]).not.toHaveProperty('thresholds');
    expect(bisectStatus(a.state)).toMatchObject({ state: 'found', culprit: 4 });
    const broken = deps({ ...regressFrom(8, 4), 7: ['boot'] });
    const b = await searchBisect(newState(def()), broken);
    expect(b.state.steps[0]).toMatchObject({ index: 7, ends: true, outcome: 'skipped' });
    expect(b.state.steps[0].note).toMatch(/goes on without the ends check/);
    expect(broken.calls[1]).not.toHaveProperty('thresholds');
    expect(bisectStatus(b.state)).toMatchObject({ state: 'found', culprit: 4 });
  });

  it("a calibrated step's thresholds reach the run: tolerance and equivalence margin both at the midpoint", async () => {
    const target = (id: string) => ({ id, label: id, kind: 'url' as const, amqpUrl: 'amqp://guest:guest@127.0.0.1:1', managementUrl: 'http://127.0.0.1:1' });
    const ui = { info: () => undefined, warn: () => undefined, group: <T>(_n: string, fn: () => Promise<T>) => fn(), trialDone: () => undefined };
    const st = await prepare(
      { scenarios: 'one_fast,one_one_one', candidate: target('candidate'), reference: target('good-end'), mode: 'check', thresholds: { one_fast: { consumed_rate: 0.118 } } },
      ui,
    );
    const [fast, other] = ['one_fast', 'one_one_one'].map((id) => st.scenarios.find((x) => x.id === id)!);
    expect(marginsFor('consumed_rate', fast.tolerances, false, fast.margins)).toEqual({ tolerance: 0.118, equivalence: 0.118 });
    // A scenario without thresholds keeps its own margins.
    expect(marginsFor('published_rate', other.tolerances, false, other.margins)).toEqual({ tolerance: 0.05, equivalence: 0.1 });
  });

  it('a search started before the ends check existed goes on without it', () => {
    const s = newState(def());
    s.steps.push({ index: 3, image: 'my/rabbitmq:t4', attempt: 1, outcome: 'good', seconds: 60, startedAt: '2026-11-20T00:00:00Z' });
    expect(nextProbe(s)).toBe(5);
    expect(bisectStatus(s)).toMatchObject({ state: 'running', lastGood: 3 });
  });

  it('an image that cannot be started is skipped and named, and the one next to the middle is tried', async () => {
    const d = deps({ ...regressFrom(8, 4), 5: ['boot'] });
    const { state } = await searchBisect(newState(def()), d);
    expect(state.steps.map((x) => [x.index, x.outcome])).toEqual([
      [7, 'bad'],
      [3, 'good'],
      [5, 'skipped'],
      [4, 'bad'],
    ]);
    expect(state.steps[2].note).toMatch(/could not be pulled or started: container exited/);
    const st = bisectStatus(state);
    expect(st).toMatchObject({ state: 'found', culprit: 4, skipped: [5], verdicts: 3 });
  });

  it('only skipped images left between the last good and the first bad: the first bad is one of them (like git bisect)', async () => {
    const d = deps({ ...regressFrom(8, 4), 3: ['boot'] });
    const { state } = await searchBisect(newState(def()), d);
    const st = bisectStatus(state);
    expect(st.state).toBe('ambiguous');
    expect(st.suspects).toEqual([3, 4]);
    expect(st.skipped).toEqual([3]);
  });

  it("an undecided image is A/B'd again with a wider cap, never guessed; still undecided, it is left out and named", async () => {
    expect(stepDesign({ looks: [10, 12, 16, 24, 32, 40] }, 2)).toEqual({ looks: [10, 12, 16, 24, 32, 40, 80] });
    expect(stepDesign({ looks: [8, 12] }, 3)).toEqual({ looks: [8, 12, 24, 36] });
    expect(stepDesign({ repetitions: 24 }, 2)).toEqual({ repetitions: 48 });
    // Image 4 (index 3) is undecided, then decided on its repeat.
    const once = deps({ ...regressFrom(8, 5), 3: ['inconclusive', 'pass'] });
    const a = await searchBisect(newState(def()), once);
    expect(a.state.steps.slice(1, 3).map((x) => [x.index, x.outcome, x.attempt])).toEqual([
      [3, 'undecided', 1],
      [3, 'good', 2],
    ]);
    expect(once.calls[2].looks).toEqual([8, 12, 24]);
    expect(bisectStatus(a.state)).toMatchObject({ state: 'found', culprit: 5 });
    // Always undecided: after two attempts the search goes on around it and names it.
    const never = deps({ ...regressFrom(8, 4), 3: ['warn'] });
    const b = await searchBisect(newState(def()), never);
    const st = bisectStatus(b.state);
    expect(st.undecided).toEqual([3]);
    expect(st.state).toBe('ambiguous');
    expect(st.suspects).toEqual([3, 4]);
    expect(b.state.steps.find((x) => x.outcome === 'undecided')!.note).toMatch(/consumed_rate warn: the rule said warn/);
  });

  it('stops at its time limit and resumes from the state file to the same culprit; a cut step is not recorded', async () => {
    const file = join(dir, 'state-time.json');
    let clock = 0;
    const d = deps(regressFrom(8, 4), {
      now: () => clock,
      timeLimitSeconds: 150,
      save: (s) => saveState(file, s),
      runAb: async (req) => {
        clock += 100_000; // each A/B takes 100 s
        return req.timeLimitSeconds > 0 && req.timeLimitSeconds < 100
          ? report('inconclusive', 1, { errors: [{ scope: 'run', message: "Stopped early: the run's time limit was reached" }] })
          : report(req.image.endsWith('t4') ? 'pass' : 'fail', 1);
      },
    });
    const first = await searchBisect(openState(file, def()).state, d);
    expect(first.stopped).toMatch(/time limit was reached during the A\/B/);
    expect(first.state.steps).toHaveLength(1);
    const again = openState(file, def());
    expect(again.resumed).toBe(true);
    expect(again.state.steps).toHaveLength(1);
    clock = 0;
    const second = await searchBisect(again.state, { ...d, timeLimitSeconds: 0 });
    expect(second.stopped).toBeUndefined();
    expect(bisectStatus(second.state)).toMatchObject({ state: 'found', culprit: 4, verdicts: 4 });
  });

  it('an interruption keeps the steps done and records nothing for the one cut', async () => {
    const c = new AbortController();
    const d = deps(regressFrom(8, 4), { signal: c.signal });
    const run = d.runAb;
    d.runAb = async (req) => {
      const r = await run(req);
      if (d.calls.length === 2) c.abort();
      return r;
    };
    const { state, stopped } = await searchBisect(newState(def()), d);
    expect(stopped).toBe('interrupted');
    expect(state.steps).toHaveLength(1);
  });

  it('a state file of another search, or not a state file, is an error naming it; a missing one starts afresh', () => {
    const file = join(dir, 'state-other.json');
    expect(openState(file, def()).resumed).toBe(false);
    saveState(file, newState(def()));
    expect(() => openState(file, { ...def(), scenarios: 'pr' })).toThrow(/belongs to another search/);
    expect(() => openState(file, { ...def(), images: images(9) })).toThrow(GateError);
    writeFileSync(file, '{"x":');
    expect(() => openState(file, def())).toThrow(/not valid JSON/);
    writeFileSync(file, JSON.stringify({ scenarios: {} }));
    expect(() => openState(file, def())).toThrow(/not a bisect state file/);
    // The saved file is what openState reads back.
    const s: BisectState = { ...newState(def()), steps: [{ index: 3, image: 'my/rabbitmq:t4', attempt: 1, outcome: 'good', seconds: 60, startedAt: 'x' }] };
    saveState(file, s);
    expect(JSON.parse(readFileSync(file, 'utf8')).steps).toHaveLength(1);
    expect(openState(file, { ...def(), attempts: 3 }).state.attempts).toBe(3);
  });

  it('a step names the worst failing gating comparison', () => {
    const r = report('fail', 0.8);
    const worse = { ...r.comparisons[0], metric: 'published_rate', ratio: 0.6, ciLow: 0.55, ciHigh: 0.65 };
    const step = stepFromReport({ ...r, comparisons: [r.comparisons[0], worse] }, 5, 'x', 1, 61.4, 'now');
    expect(step).toMatchObject({ outcome: 'bad', metric: 'published_rate', ratio: 0.6, seconds: 61 });
    expect(step.gating).toHaveLength(2);
  });
});

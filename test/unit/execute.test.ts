// The execute stage's trial loop without a broker (src/pipeline/execute.ts): the plan run in its
// interleaved order, a scenario stopped at the look that decides it (its remaining rounds skipped,
// the planned total shrinking), fail-fast ending the undecided ones at that look, an undecided
// scenario going on to the next look, a resumed run's kept trials taken rather than run again, a
// checkpoint after each trial run, trial errors recorded, the run's signal ending the loop, and a
// pair the machine disturbed (its other load differing between the two trials) not compared.
import { describe, expect, it } from 'vitest';
import { sequentialDesign, SequentialRun } from '../../src/compare/sequential';
import { type ExecuteState, execute } from '../../src/pipeline/execute';
import { buildPlan, type PlannedTrial, rng } from '../../src/plan/plan';
import type { ScenarioSpec, TargetSpec, TrialResult } from '../../src/schema/types';
import { spec } from '../support/broker';

const candidate = { id: 'candidate', label: 'new', kind: 'url', url: 'amqp://x' } as unknown as TargetSpec;
const reference = { id: 'reference', label: 'old', kind: 'url', url: 'amqp://y' } as unknown as TargetSpec;
const scenario = (id: string): ScenarioSpec => ({ ...spec(id, {}), gate: ['consumed_rate'] });
const LOOKS = [10, 12, 16, 24];

/** A fake broker pair: each scenario's candidate/reference rate ratio and relative noise. */
function fakeRunner(effects: Record<string, { ratio: number; noise: number }>, seed = 7, otherCores: (p: PlannedTrial) => number = () => 0.03) {
  const random = rng(seed);
  const calls: PlannedTrial[] = [];
  return {
    calls,
    run: async (p: PlannedTrial): Promise<TrialResult> => {
      calls.push(p);
      const e = effects[p.scenario.id];
      const level = 1000 * (p.target === 'candidate' ? e.ratio : 1) * (1 + e.noise * (2 * random() - 1));
      const machine = { seconds: 3, busyCores: 1.6, otherCores: otherCores(p), steal: 0, iowait: 0 };
      return { scenario: p.scenario.id, target: p.target, trial: p.trial, order: p.order, startedAt: '', valid: true, metrics: { consumed_rate: level }, series: [], histograms: {}, machine };
    },
  };
}

function state(scenarios: ScenarioSpec[], o: { failFast?: boolean; signal?: AbortSignal; kept?: Map<number, TrialResult> } = {}) {
  const design = sequentialDesign(LOOKS, scenarios.length, 24);
  const lines: string[] = [];
  const done: Array<[number, number]> = [];
  const s: ExecuteState = {
    ui: { info: (m) => lines.push(m), warn: (m) => lines.push(`warning: ${m}`), group: (_n, fn) => fn(), trialDone: (n, total) => done.push([n, total]) },
    opts: { scenarios: '', mode: 'check', candidate, reference },
    specs: [candidate, reference],
    scenarios,
    design,
    seq: new SequentialRun(design, o.failFast !== false),
    kept: o.kept ?? new Map(),
    trials: [],
    errors: [],
    trialSignal: o.signal ?? new AbortController().signal,
    planned: scenarios.length * 2 * design.looks.at(-1)!,
    lastRun: undefined,
  };
  const plan = buildPlan(scenarios, ['candidate', 'reference'], design.looks.at(-1)!, 42);
  return { s, plan, lines, done };
}

const pairsOf = (trials: TrialResult[], id: string) => trials.filter((t) => t.scenario === id && t.target === 'candidate').length;

describe('execute: the trial loop', () => {
  it('a 20 % regression stops at the first look; fail-fast stops the other scenario there too; the planned total shrinks', async () => {
    const { s, plan, lines, done } = state([scenario('slower'), scenario('same')]);
    const runner = fakeRunner({ slower: { ratio: 0.8, noise: 0.01 }, same: { ratio: 1, noise: 0.3 } });
    let saved = 0;
    await execute(s, plan, { run: runner.run, ran: () => saved++ });
    expect(s.design!.looks[0]).toBe(10);
    expect(pairsOf(s.trials, 'slower')).toBe(10);
    expect(pairsOf(s.trials, 'same')).toBe(10);
    expect(s.trials).toHaveLength(40);
    expect(runner.calls).toHaveLength(40);
    expect(saved).toBe(40);
    expect(s.planned).toBe(40);
    expect(done.at(-1)).toEqual([40, 40]);
    expect(s.seq!.failedFast).toEqual({ scenario: 'slower', pairs: 10 });
    expect(lines).toContainEqual(expect.stringMatching(/^slower: decided at look 1 of 4, after 10 pairs: consumed_rate regression; its remaining rounds are skipped$/));
    expect(lines).toContainEqual(expect.stringMatching(/^fail-fast: slower failed after 10 pairs, so same stopped there too/));
    // The trials ran in the plan's interleaved order.
    expect(runner.calls.map((p) => p.order)).toEqual([...runner.calls.map((p) => p.order)].sort((a, b) => a - b));
  });

  it('without fail-fast, an undecided scenario goes on to later looks while the decided one stops', async () => {
    const { s, plan, lines } = state([scenario('slower'), scenario('noisy')], { failFast: false });
    await execute(s, plan, fakeRunner({ slower: { ratio: 0.8, noise: 0.01 }, noisy: { ratio: 1, noise: 0.5 } }));
    expect(pairsOf(s.trials, 'slower')).toBe(10);
    expect(pairsOf(s.trials, 'noisy')).toBeGreaterThan(10);
    expect(LOOKS).toContain(pairsOf(s.trials, 'noisy'));
    expect(s.seq!.failedFast).toBeUndefined();
    expect(lines).toContainEqual(expect.stringMatching(/^noisy: (decided at look [2-4] of 4|ran to the cap, 24 pairs, not decided)/));
    expect(s.planned).toBe(s.trials.length);
  });

  it('a resumed run takes its kept trials instead of running them again; only the trials it runs are saved', async () => {
    const first = state([scenario('same')]);
    const kept = new Map<number, TrialResult>();
    const before = fakeRunner({ same: { ratio: 1, noise: 0.01 } }, 1);
    for (const p of first.plan.slice(0, 6)) kept.set(p.order, await before.run(p));
    const { s, plan } = state([scenario('same')], { kept });
    const runner = fakeRunner({ same: { ratio: 1, noise: 0.01 } }, 2);
    let saved = 0;
    await execute(s, plan, { run: runner.run, ran: () => saved++ });
    expect(s.trials.slice(0, 6)).toEqual([...kept.values()]);
    expect(runner.calls.map((p) => p.order)).not.toContain(plan[0].order);
    expect(saved).toBe(runner.calls.length);
    expect(s.trials).toHaveLength(6 + runner.calls.length);
  });

  it("a trial's error is recorded with its scope; the run's signal ends the loop after the trial it interrupted", async () => {
    const abort = new AbortController();
    const { s, plan } = state([scenario('same')], { signal: abort.signal });
    const runner = fakeRunner({ same: { ratio: 1, noise: 0.01 } });
    await execute(s, plan, {
      run: async (p) => {
        const r = await runner.run(p);
        if (runner.calls.length === 3) r.error = 'the broker closed the connection';
        if (runner.calls.length === 5) abort.abort();
        return r;
      },
    });
    expect(s.trials).toHaveLength(5);
    expect(s.errors).toEqual([{ scope: `same on ${plan[2].target}, trial ${plan[2].trial + 1}`, message: 'the broker closed the connection' }]);
    expect(s.lastRun).toBe(s.trials[4]);
  });

  it('a pair whose trials saw the other load differ is not compared (both trials invalid, with the reason); steady other load on both is kept', async () => {
    const { s, plan, lines } = state([scenario('same')]);
    // Pair 4: another job ran during the candidate's trial only; pair 6: during both.
    const other = (p: PlannedTrial) => (p.trial === 3 && p.target === 'candidate' ? 0.9 : p.trial === 5 ? 0.9 : 0.03);
    await execute(s, plan, fakeRunner({ same: { ratio: 1, noise: 0.01 } }, 7, other));
    const pair = (i: number) => s.trials.filter((t) => t.trial === i);
    expect(pair(3).map((t) => t.valid)).toEqual([false, false]);
    expect(pair(3)[0].invalidReason).toMatch(
      /^the machine's other load differed within the pair \((0\.9 and 0\.03|0\.03 and 0\.9) of \d+ cores; 0\.\d+ or more apart\), so the pair would measure the machine, not the brokers$/,
    );
    expect(pair(5).every((t) => t.valid)).toBe(true);
    expect(s.trials.filter((t) => !t.valid)).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringMatching(/^same, pair 4: not compared: the machine's other load differed/));
    // The look at 10 rounds compares the 9 pairs left.
    const cs = s.seq!.compareAt(scenario('same'), s.trials, candidate, reference);
    expect(cs.find((c) => c.gating)?.nCandidate).toBe(
      pairsOf(
        s.trials.filter((t) => t.valid),
        'same',
      ),
    );
  });
});

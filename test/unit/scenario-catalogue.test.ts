// The shipped catalogue: every file parses and matches its name, rabbitmq/testing's 14 workloads
// are all there with their original commands (which our PerfTest translator accepts), presets
// resolve and fit their time budgets, and expanded ids select single variants.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogueIds, loadCatalogue, loadPresets, resolveScenarios, splitIds } from '../../src/config/catalogue';
import { applyPerfTestArgs, perfTestDefaults } from '../../src/config/perftest-args';
import { packagePath } from '../../src/config/paths';
import { buildPlan, estimateSeconds } from '../../src/plan/plan';
import { minAttainableP } from '../../src/compare/stats';
import { ALPHA, defaultRepetitions } from '../../src/compare/compare';
import { ofKind } from '../support/kinds';

const SCRIPT_SH = [
  'one_fast',
  'two_publishers_no_consumers',
  'one_consumer_no_publishers',
  'fivers',
  'fanout10',
  'one_one_one',
  'seven_thousand_slow_one_queue',
  'thousand_slow_thousand_queues',
  'consumers_join_late',
  'consumers_join_late_sac',
  'one_fast_multiack',
  'publish_only_ttl',
  'publish_to_nack',
  'nack_published',
];

/** rabbitmq/testing main/script.sh (6b49d5c), the 14 workload lines verbatim. */
const SCRIPT_LINES = [
  'perf_test one_fast -x 1 -y 1 -c 3000 -u one_fast -qa x-max-length=5000000',
  'perf_test two_publishers_no_consumers -x 2 -y 0 -c 700 -u publish_then_consume -qa x-max-length=5000000',
  'perf_test one_consumer_no_publishers -x 0 -y 1 -q 300 -u publish_then_consume -qa x-max-length=5000000',
  'perf_test fivers -x 5 -y 5 -r 10000 -c 500 -qp fivers-%d -qpf 1 -qpt 5 -qa x-max-length=1000000',
  'perf_test fanout10 -x 1 -y 10 -c 100 -e amq.fanout -t fanout -qp q-%d -qpf 1 -qpt 10 -qa x-max-length=1000000',
  'perf_test one_one_one -x 1 -y 1 -c 1 -u one_one_one -qa x-max-length=1000000',
  'perf_test seven_thousand_slow_one_queue -x 7000 -y 7 -P 1 -c 1 -u seven_thousand_slow_one_queue -qa x-max-length=1000000',
  'perf_test thousand_slow_thousand_queues -x 1000 -y 1000 -P 0.1 -c 1 -qp thousand_slow_thousand_queues-%d -qpf 1 -qpt 1000 -qa x-max-length=1000000',
  'perf_test consumers_join_late -x 1 -c 100 -y 10 -q 300 -r 10000 -qa x-max-length=1000000 -u consumers_join_late  -csd 150',
  'perf_test consumers_join_late_sac -x 1 -c 100 -q 300 -y 50 -r 10000 -qa x-max-length=1000000,x-single-active-consumer=true -u consumers_join_late_sac  -csd 150',
  'perf_test one_fast_multiack -x 1 -y 1 -c 3000 --multi-ack-every 1000 -u one_fast_multiack -qa x-max-length=1000000',
  'perf_test publish_only_ttl -x 1 -y 0 -c 1 -u publish_only_ttl --message-properties expiration=10000',
  'perf_test publish_to_nack -x 1 -y 0 -c 1 -u publish_then_nack -qa x-max-length=250000',
  'perf_test nack_published -x 0 -y 4 -u publish_then_nack -qa x-max-length=250000  --nack --requeue false',
];

const minutes = (name: string) => estimateSeconds(buildPlan(resolveScenarios(name).scenarios, ['t'], 5, 1)) / 60;

describe('the scenario catalogue', () => {
  const all = loadCatalogue();

  it('parses every file, each id matching its file name', () => {
    for (const id of catalogueIds()) {
      const specs = resolveScenarios(id).scenarios;
      expect(specs.length).toBeGreaterThan(0);
      for (const s of specs) expect(s.id.replace(/\[.*$/, '')).toBe(id);
    }
    expect(all.length).toBeGreaterThan(40);
  });

  it('has all 14 workloads of rabbitmq/testing main/script.sh, with commands our translator accepts', () => {
    for (const id of SCRIPT_SH) {
      const [s] = resolveScenarios(id).scenarios;
      expect(s.origin.source).toBe('rabbitmq/testing main/script.sh');
      const lines = s.origin.command.split('\n');
      const own = lines.find((l) => l.startsWith(`perf_test ${id} `))!;
      expect(own, id).toBeDefined();
      // Verbatim: the script line, followed by the wrapper's classic-queue and size/time flags.
      const scriptLine = own.replace(/ -ad false -f persistent -s 100 --time 300$/, '');
      expect(SCRIPT_LINES, id).toContain(scriptLine);
      for (const l of lines.filter((x) => x.startsWith('perf_test '))) applyPerfTestArgs(perfTestDefaults(id), l, { file: s.file });
      expect(s.workload.persistent || (s.kind === 'phases' && s.phases[0].workload.persistent)).toBe(true);
    }
    expect(readFileSync(packagePath('scenarios/publish_only_ttl.yml'), 'utf8')).toContain(
      'rabbitmqadmin declare policy --name ttl_dlq --pattern publish_only_ttl --definition \'{"dead-letter-exchange":"","dead-letter-routing-key":"ttl_dlq"}\' --apply-to queues',
    );
  });

  it('models the dead-letter workloads with their policies and queues', () => {
    const [ttl] = resolveScenarios('publish_only_ttl').scenarios;
    expect(ttl.setup!.policies[0]).toMatchObject({ name: 'ttl_dlq', pattern: 'publish_only_ttl', definition: { 'dead-letter-exchange': '', 'dead-letter-routing-key': 'ttl_dlq' } });
    expect(ttl.setup!.deadLetterQueue).toBe('ttl_dlq');
    const [nack] = resolveScenarios('nack_published').scenarios;
    expect(ofKind(nack, 'phases').phases[1].workload).toMatchObject({ consumers: 4, nack: true, requeue: false });
    expect(nack.setup!.deadLetterQueue).toBe('nack_dlq');
  });

  it('scales the many-publisher workloads by one factor', () => {
    const [seven] = resolveScenarios('seven_thousand_slow_one_queue').scenarios;
    expect([seven.workload.producers, seven.workload.consumers, seven.scale]).toEqual([350, 1, 0.05]);
    const [thousand] = resolveScenarios('thousand_slow_thousand_queues', undefined, { scale: 0.5 }).scenarios;
    expect([thousand.workload.producers, thousand.workload.queuePatternTo]).toEqual([50, 50]);
  });

  it('has the presets, within their time budgets and significance limits', () => {
    expect(loadPresets().map((p) => p.name)).toEqual(['smoke', 'pr', 'strict', 'standard', 'metadata', 'protocols', 'full']);
    expect(minutes('smoke')).toBeLessThanOrEqual(1);
    // A/B: both targets, 5 trials each, in 10 minutes.
    expect(2 * minutes('pr')).toBeLessThanOrEqual(10);
    const gates = resolveScenarios('pr').scenarios.reduce((n, s) => n + s.gate.length, 0);
    expect(minAttainableP(5, 5) * gates).toBeLessThan(ALPHA);
    expect(
      resolveScenarios('standard')
        .scenarios.map((s) => s.id)
        .sort(),
    ).toEqual([...SCRIPT_SH].sort());
    expect(resolveScenarios('full').scenarios.length).toBe(all.length);
  });

  it("an A/B of pr runs the preset's pairs (its measured power), the same scenarios by id only what Holm needs", () => {
    const pr = resolveScenarios('pr');
    expect(pr.pairs).toBe(24);
    expect(defaultRepetitions(pr.scenarios, true, pr.pairs)).toBe(24);
    expect(defaultRepetitions(pr.scenarios, false, pr.pairs)).toBe(5);
    const byIds = resolveScenarios(pr.scenarios.map((s) => s.id).join(','));
    expect(byIds.pairs).toBeUndefined();
    expect(defaultRepetitions(byIds.scenarios, true, byIds.pairs)).toBe(8);
    // A preset's pairs never go below what Holm needs: standard's 14 gating metrics need 10.
    expect(defaultRepetitions(resolveScenarios('standard').scenarios, true, 6)).toBe(10);
  });

  it("strict: every gating metric at the preset's 2 % tolerance, 80 pairs in an A/B, within 30 minutes; pr is sequential", () => {
    const strict = resolveScenarios('strict');
    expect(strict.scenarios.every((s) => s.gate.every((m) => s.tolerances[m] === 0.02))).toBe(true);
    expect(defaultRepetitions(strict.scenarios, true, strict.pairs)).toBe(80);
    expect(strict.looks).toBeUndefined();
    expect(estimateSeconds(buildPlan(strict.scenarios, ['a', 'b'], 80, 1)) / 60).toBeLessThanOrEqual(30);
    expect(resolveScenarios('one_fast').scenarios[0].tolerances.consumed_rate).toBeUndefined();
    expect(resolveScenarios('pr').looks).toEqual([10, 12, 16, 24, 32, 40, 48, 56, 64]);
  });

  it('selects single variants by expanded id, also in comma-separated lists', () => {
    expect(splitIds('a, b[size=100,queue=quorum],c')).toEqual(['a', 'b[size=100,queue=quorum]', 'c']);
    const { scenarios } = resolveScenarios('one_fast,throughput_by_size[size=100,queue=quorum]');
    expect(scenarios.map((s) => s.id)).toEqual(['one_fast', 'throughput_by_size[size=100,queue=quorum]']);
    expect(() => resolveScenarios('throughput_by_size[size=7]')).toThrow(/has no "throughput_by_size\[size=7\]"/);
    expect(() => resolveScenarios('nope')).toThrow(/unknown preset or scenario/);
  });
});

// Resuming a run that stopped early, the decisions without brokers (src/broker/resume.ts): what
// its report records (secrets masked), the targets started again from it, how a restarted broker
// must match the one measured (image ID, config files, version, nodes, effective configuration),
// and which trials are kept. The real resume is in test/integration/interrupt.test.ts.
import { describe, expect, it } from 'vitest';
import { brokerChanges, checkSameBrokers, keptTrials, resumedTargets, resumeRecord } from '../../src/broker/resume';
import { buildPlan } from '../../src/plan/plan';
import type { DockerTargetSpec, EffectiveConfig, RunReport, TargetInfo, TrialResult, UrlTargetSpec } from '../../src/schema/types';
import { spec } from '../support/broker';

const docker: DockerTargetSpec = {
  id: 'candidate',
  label: 'c',
  kind: 'docker',
  image: 'img:1',
  configFiles: ['/x/rabbitmq.conf'],
  nodes: 1,
  env: { RABBITMQ_DEFAULT_PASS: 'hunter2', RABBITMQ_VM_MEMORY_HIGH_WATERMARK: '0.6' },
  setup: [],
  network: 'host',
};
const url = (pass: string): UrlTargetSpec => ({ id: 'baseline', label: 'b', kind: 'url', amqpUrl: `amqp://u:${pass}@10.0.0.5:5672`, managementUrl: `http://u:${pass}@10.0.0.5:15672` });
const base = { freezeIdle: true, anchor: true, failFast: true, flameGraph: false, planned: 8 };
const effective = (over: Partial<EffectiveConfig> = {}): EffectiveConfig => ({
  rabbitmqVersion: '3.10.8',
  erlangVersion: '25',
  plugins: ['rabbitmq_management'],
  vhost: [],
  node: { vm_memory_high_watermark: '0.4' },
  digest: 'd1',
  ...over,
});
const info = (over: Partial<TargetInfo> = {}): TargetInfo => ({
  id: 'candidate',
  label: 'c',
  kind: 'docker',
  amqpUrl: 'amqp://x',
  managementUrl: 'http://x',
  image: 'img:1',
  imageId: 'sha256:aaaaaaaaaaaaaaaaaa',
  configDigest: 'sha256:c1',
  rabbitmqVersion: '3.10.8',
  erlangVersion: '25',
  nodes: [{ name: 'n1' }],
  effective: effective(),
  ...over,
});

describe('the resume record', () => {
  it('keeps the targets as given, secrets masked: env values of secret names, URL passwords other than the default', () => {
    const r = resumeRecord({ ...base, candidate: docker, reference: url('s3cret') });
    expect(r.candidate).toEqual({ ...docker, env: { RABBITMQ_DEFAULT_PASS: '***', RABBITMQ_VM_MEMORY_HIGH_WATERMARK: '0.6' } });
    expect(r.reference).toMatchObject({ amqpUrl: 'amqp://u:***@10.0.0.5:5672', managementUrl: 'http://u:***@10.0.0.5:15672/' });
    expect(JSON.stringify(r)).not.toContain('hunter2');
    expect(JSON.stringify(r)).not.toContain('s3cret');
    expect(resumeRecord({ ...base, candidate: url('guest') }).candidate).toEqual(url('guest'));
  });

  it('starts them again with fresh random secrets; a masked URL password must be given again', () => {
    const t = resumedTargets(resumeRecord({ ...base, candidate: docker }), 'r.json');
    expect(t.candidate.kind === 'docker' && t.candidate.env.RABBITMQ_DEFAULT_PASS).toMatch(/^[0-9a-f]{24}$/);
    expect(() => resumedTargets(resumeRecord({ ...base, candidate: docker, reference: url('s3cret') }), 'r.json')).toThrow(/had a password, which reports never keep/);
  });
});

describe('the same brokers', () => {
  it('nothing changed: the same image ID, files, version, nodes and effective configuration', () => {
    expect(brokerChanges(info(), info({ amqpUrl: 'amqp://other-port' }))).toEqual([]);
  });

  it('names each difference', () => {
    expect(
      brokerChanges(
        info(),
        info({
          image: 'img:2',
          imageId: 'sha256:bbbbbbbbbbbbbbbbbb',
          configDigest: 'sha256:c2',
          rabbitmqVersion: '4.0.5',
          effective: effective({ rabbitmqVersion: '4.0.5', digest: 'd2', plugins: ['rabbitmq_management', 'rabbitmq_mqtt'] }),
        }),
      ),
    ).toEqual(['image img:1 (aaaaaaaaaaaa) then, img:2 (bbbbbbbbbbbb) now', 'RabbitMQ 3.10.8 then, 4.0.5 now', 'effective configuration: plugin rabbitmq_mqtt: now only']);
    expect(brokerChanges(info(), info({ configDigest: 'sha256:c2' }))).toEqual(['its config files changed']);
    expect(brokerChanges(info(), info({ effective: effective({ node: { vm_memory_high_watermark: '0.6' }, digest: 'd2' }) }))).toEqual([
      'effective configuration: node setting vm_memory_high_watermark: then 0.4 · now 0.6',
    ]);
    expect(brokerChanges(info(), info({ nodes: [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }] }))).toEqual(['1 node(s) then, 3 now']);
  });

  it('checkSameBrokers: one error for all targets, naming the file and the option', () => {
    const prior = { targets: [info(), info({ id: 'baseline', label: 'b' })] } as RunReport;
    expect(() => checkSameBrokers(prior, [info(), info({ id: 'baseline', label: 'b' })], 'r.json')).not.toThrow();
    expect(() => checkSameBrokers(prior, [info({ imageId: 'sha256:bbbbbbbbbbbbbbbbbb' })], 'r.json')).toThrow(
      'these are not the brokers the interrupted run measured: the interrupted run measured 2 target(s), this one 1; c: image img:1 (aaaaaaaaaaaa) then, img:1 (bbbbbbbbbbbb) now',
    );
  });
});

describe('the trials kept', () => {
  const scenarios = [spec('a', {}), spec('b', {})];
  const plan = buildPlan(scenarios, ['candidate', 'baseline'], 3, 7);
  const trial = (i: number, valid = true): TrialResult => ({
    scenario: plan[i].scenario.id,
    target: plan[i].target,
    trial: plan[i].trial,
    order: i,
    startedAt: '',
    valid,
    metrics: {},
    series: [],
    histograms: {},
  });

  it('all but the one the stop cut short, by their place in the plan', () => {
    const prior = { trials: [trial(0), trial(1), trial(2, false)], resume: { ...base, candidate: docker, cut: 2 } } as RunReport;
    expect([...keptTrials(prior, plan, 'r.json').keys()]).toEqual([0, 1]);
  });

  it('a trial that is not where the plan puts it: the report was edited or comes from another plan', () => {
    const moved = { ...trial(1), target: plan[1].target === 'candidate' ? 'baseline' : 'candidate' };
    expect(() => keptTrials({ trials: [trial(0), moved] } as RunReport, plan, 'r.json')).toThrow(/its trial 2 \(.*\) is not where the resumed run's plan puts it/);
  });
});

// The metadata store a target runs on: read from the management API's feature flags
// (khepri_db enabled → khepri; disabled, changing or absent → mnesia) and shown with the
// targets in the Markdown report, escaped like every other text from a report.
import { describe, expect, it } from 'vitest';
import { metadataStoreOf } from '../../src/broker/management';
import { renderSummary } from '../../src/report/markdown';
import type { RunReport, TargetInfo } from '../../src/schema/types';

describe('metadataStoreOf', () => {
  it('khepri only when the khepri_db flag is enabled', () => {
    expect(
      metadataStoreOf([
        { name: 'quorum_queue', state: 'enabled' },
        { name: 'khepri_db', state: 'enabled' },
      ]),
    ).toBe('khepri');
    expect(metadataStoreOf([{ name: 'khepri_db', state: 'disabled' }])).toBe('mnesia');
    expect(metadataStoreOf([{ name: 'khepri_db', state: 'state_changing' }])).toBe('mnesia');
    expect(metadataStoreOf([{ name: 'quorum_queue', state: 'enabled' }])).toBe('mnesia'); // 3.12 and older: no flag
    expect(metadataStoreOf([])).toBe('mnesia');
  });
});

describe('Markdown targets line', () => {
  const target = (id: string, label: string, metadataStore?: TargetInfo['metadataStore']): TargetInfo => ({
    id,
    label,
    kind: 'docker',
    amqpUrl: 'amqp://guest:***@127.0.0.1:5672',
    managementUrl: 'http://127.0.0.1:15672',
    rabbitmqVersion: '4.0.5',
    erlangVersion: '27.3',
    metadataStore,
    nodes: [],
  });
  const report = (targets: TargetInfo[]) =>
    ({
      schemaVersion: 1,
      tool: { name: 'rabbitmq-perf-gate', version: '0' },
      createdAt: '',
      mode: 'check',
      preset: 'metadata',
      repetitions: 5,
      seed: 1,
      fingerprint: { tool: 't', toolVersion: '0', node: 'v24', os: 'linux', kernel: 'k', cpuModel: 'cpu', cores: 2, memoryBytes: 1 },
      scenarios: [],
      targets,
      candidate: 'candidate',
      trials: [],
      comparisons: [],
      decidedBy: 'x',
      verdict: 'pass',
      regressions: 0,
      improvements: 0,
      errors: [],
      durationSeconds: 1,
    }) as unknown as RunReport;

  it("shows each target's metadata store when known, nothing when not", () => {
    const md = renderSummary(report([target('candidate', 'khepri_target', 'khepri'), target('baseline', 'mnesia', 'mnesia'), target('old', 'old')]), { name: 'g' });
    expect(md).toContain('**khepri\\_target**: RabbitMQ 4.0.5, Erlang 27.3, metadata store khepri;');
    expect(md).toContain('**mnesia**: RabbitMQ 4.0.5, Erlang 27.3, metadata store mnesia;');
    expect(md).toContain('**old**: RabbitMQ 4.0.5, Erlang 27.3\n');
  });
});

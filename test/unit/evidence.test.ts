// Broker evidence without a broker: parsing a Prometheus scrape (lines as RabbitMQ 3.10.8 emits
// them), deriving per-message evidence from two readings, finding a container's cgroup files in
// both cgroup layouts, and the report's "what moved inside the broker" lines. The same code on
// real brokers and containers: test/integration/evidence.test.ts and anchored-baseline.test.ts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cgroupFiles, parseIo, parsePrometheus } from '../../src/broker/evidence';
import { deriveEvidence, EVIDENCE, type EvidenceReading, workUnits } from '../../src/metrics/evidence';
import { metricDef } from '../../src/metrics/definitions';
import { parseScenario } from '../../src/config/scenario-file';
import { GateError } from '../../src/schema/errors';
import { evidenceForRegressions, evidenceGaps, topEvidence } from '../../src/report/evidence';
import { renderComment } from '../../src/report/markdown';
import { renderHtml } from '../../src/report/html';
import { terminalTable } from '../../src/report/terminal';
import type { Comparison, RunReport } from '../../src/schema/types';

const SCRAPE = `# TYPE erlang_vm_statistics_reductions_total counter
erlang_vm_statistics_reductions_total 4334738593
erlang_vm_statistics_garbage_collection_number_of_gcs 1438729
erlang_vm_statistics_garbage_collection_words_reclaimed 9629788782
erlang_vm_statistics_run_queues_length 2
erlang_vm_memory_bytes_total{kind="system"} 158661320
erlang_vm_memory_bytes_total{kind="processes"} 29159600
erlang_vm_memory_system_bytes_total{usage="binary"} 63646720
erlang_vm_memory_system_bytes_total{usage="ets"} 44194624
erlang_vm_memory_system_bytes_total{usage="code"} 35215198
erlang_vm_msacc_gc_seconds_total{type="aux",id="1"} 9.0
erlang_vm_msacc_gc_seconds_total{type="scheduler",id="1"} 0.5
erlang_vm_msacc_gc_seconds_total{type="scheduler",id="2"} 0.25
erlang_vm_msacc_sleep_seconds_total{type="scheduler",id="1"} 3.0
rabbitmq_queue_process_reductions_total 12
`;

function reading(at: number, c: EvidenceReading['counters'], g: EvidenceReading['gauges'] = {}): EvidenceReading {
  return { at, counters: c, gauges: g, sources: ['prometheus'] };
}

describe('a Prometheus scrape', () => {
  it("yields the VM counters, memory by category and the schedulers' microstates (not other threads')", () => {
    const { counters, gauges } = parsePrometheus(SCRAPE);
    expect(counters).toMatchObject({ reductions: 4334738593, gcs: 1438729, gc_words: 9629788782, msacc_gc: 750_000, msacc_sleep: 3_000_000 });
    expect(gauges).toEqual({ run_queue: 2, mem_total: 158661320 + 29159600, mem_processes: 29159600, mem_binary: 63646720, mem_ets: 44194624 });
  });
});

describe('evidence from two readings', () => {
  const all = (base: number) => ({
    cpu_us: base,
    reductions: base * 100,
    gcs: base / 10,
    gc_words: base * 5,
    disk_read_bytes: 0,
    disk_write_bytes: base * 2,
    msacc_emulator: base,
    msacc_gc: base / 4,
    msacc_port: 0,
    msacc_check_io: 0,
    msacc_aux: 0,
    msacc_other: 0,
    msacc_sleep: base * 2,
  });

  it('is per message, over the window between the readings', () => {
    const e = deriveEvidence(reading(0, all(0)), reading(2000, all(1_000_000), { mem_total: 100 * 2 ** 20 }), 10_000);
    expect(e.broker_cpu_us_per_msg).toBe(100);
    expect(e.broker_cpu_cores).toBe(0.5);
    expect(e.broker_reductions_per_msg).toBe(10_000);
    expect(e.broker_gc_per_kmsg).toBe(10_000);
    expect(e.broker_disk_write_kb_per_msg).toBeCloseTo(2e6 / 1024 / 1e4, 3);
    // busy = emulator + gc = 1.25 s over 2 s; the split is of busy time, not of time asleep too.
    expect(e.broker_sched_busy).toBe(0.625);
    expect(e.broker_sched_us_per_msg).toBe(125);
    expect(e.broker_gc_us_per_msg).toBe(25);
    expect(e.broker_msacc_gc).toBe(0.2);
    expect(e.broker_msacc_emulator).toBe(0.8);
    expect(e.broker_mem_total_mb).toBe(100);
  });

  it('leaves out what it cannot say: microstate accounting off, a counter that went backwards, a missing source', () => {
    const off = { ...all(5), msacc_emulator: 0, msacc_gc: 0, msacc_sleep: 0 };
    const e = deriveEvidence(reading(0, { ...off, msacc_emulator: 0, msacc_gc: 0, msacc_sleep: 0 }), reading(1000, { ...off, reductions: 1 }), 100);
    expect(Object.keys(e).filter((k) => k.includes('msacc') || k.includes('sched'))).toEqual([]);
    expect(e.broker_reductions_per_msg).toBeUndefined(); // reset by a restart
    expect(deriveEvidence(reading(0, { reductions: 1 }), reading(1000, {}), 100)).toEqual({});
    expect(deriveEvidence(reading(5, { reductions: 1 }), reading(5, { reductions: 2 }), 100)).toEqual({});
  });

  it('counts the work the trial did: consumed, else published, else churn operations; none: per second', () => {
    expect(workUnits({ consumed_rate: 100, published_rate: 200 }, 2)).toBe(200);
    expect(workUnits({ published_rate: 200 }, 2)).toBe(400);
    expect(workUnits({ queue_churn_ops: 50 }, 3)).toBe(150);
    expect(workUnits({ import_seconds: 3 }, 3)).toBe(0);
    expect(deriveEvidence(reading(0, { reductions: 0 }), reading(4000, { reductions: 400 }), 0).broker_reductions_per_msg).toBe(100);
  });

  it('every evidence metric is in the registry as evidence, never a gating kind', () => {
    for (const e of EVIDENCE) expect(metricDef(e.id)).toMatchObject({ kind: 'evidence', unit: e.unit, direction: e.direction });
  });
});

describe("a container's cgroup files", () => {
  it('cgroup v1 (cgroupfs driver): cpuacct.usage in ns, blkio service bytes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cg1-'));
    const dir = '/docker/abc123';
    mkdirSync(join(root, 'cpu,cpuacct', dir), { recursive: true });
    mkdirSync(join(root, 'blkio', dir), { recursive: true });
    writeFileSync(join(root, 'cpu,cpuacct', dir, 'cpuacct.usage'), '123456000\n');
    writeFileSync(join(root, 'blkio', dir, 'blkio.throttle.io_service_bytes'), '8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 0\n8:0 Total 12288\nTotal 12288\n');
    const f = await cgroupFiles(`12:blkio:${dir}\n4:cpu,cpuacct:${dir}\n0::/system.slice/containerd.service\n`, root);
    expect(f).toMatchObject({ cpu: { file: join(root, 'cpu,cpuacct', dir, 'cpuacct.usage'), scale: 1e-3 }, io: { v2: false } });
  });

  it('cgroup v2 (systemd driver): cpu.stat usage_usec, io.stat', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cg2-'));
    const dir = '/system.slice/docker-abc123.scope';
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'cpu.stat'), 'usage_usec 5000\nuser_usec 3000\n');
    writeFileSync(join(root, dir, 'io.stat'), '');
    expect(await cgroupFiles(`0::${dir}\n`, root)).toMatchObject({ cpu: { key: 'usage_usec', scale: 1 }, io: { v2: true } });
    expect(await cgroupFiles('0::/nowhere\n', root)).toBeUndefined();
  });

  it('block I/O in both formats', () => {
    expect(parseIo('8:0 Read 4096\n8:0 Write 8192\n8:16 Write 8\nTotal 12296\n', false)).toEqual({ read: 4096, write: 8200 });
    expect(parseIo('8:0 rbytes=100 wbytes=200 rios=1 wios=2\n8:16 rbytes=1 wbytes=2\n', true)).toEqual({ read: 101, write: 202 });
  });
});

describe('a scenario file', () => {
  it('may not gate on broker evidence: one error naming the field and the fix', () => {
    const text = 'id: x\ndescription: d\norigin: { source: s, command: c }\nperf-test: -x 1 -y 1\ngate: [consumed_rate, broker_cpu_us_per_msg]\n';
    expect(() => parseScenario(text, 'x.yml')).toThrow(GateError);
    expect(() => parseScenario(text, 'x.yml')).toThrow(/broker evidence.*cannot gate itself/);
  });
});

describe('the report', () => {
  const cmp = (metric: string, ratio: number, lo: number, hi: number, extra: Partial<Comparison> = {}): Comparison => ({
    scenario: 'one_fast',
    metric,
    unit: metricDef(metric).unit,
    direction: metricDef(metric).direction,
    against: 'base',
    baselineLabel: 'base <b>',
    candidateLabel: 'head',
    nBaseline: 8,
    nCandidate: 8,
    baselineMedian: 1,
    candidateMedian: ratio,
    ratio,
    ciLow: lo,
    ciHigh: hi,
    pValue: 0.01,
    pAdjusted: 0.01,
    tolerance: 0.1,
    change: 'worse',
    verdict: 'pass',
    reason: '',
    gating: false,
    paired: true,
    failsBeyond: null,
    ...extra,
  });
  const report = {
    comparisons: [cmp('consumed_rate', 0.8, 0.75, 0.85, { gating: true, verdict: 'fail' })],
    evidence: [cmp('broker_gc_us_per_msg', 1.42, 1.31, 1.55), cmp('broker_sched_busy', 1.06, 1.02, 1.1), cmp('broker_mem_binary_mb', 3, 0.5, 6), cmp('broker_cpu_us_per_msg', 0.75, 0.6, 0.8)],
    targets: [{ label: 'url broker', evidence: { sources: ['prometheus'], missing: [{ source: 'cgroup', why: 'attached by URL' }] } }],
    trials: [],
    errors: [],
    scenarios: [{ id: 'one_fast' }],
    fingerprint: { cpuModel: 'c', cores: 2, os: 'o', node: 'n', tool: 't', toolVersion: 'v' },
    verdict: 'fail',
    decidedBy: 'same-run A/B',
    regressions: 1,
    improvements: 0,
    preset: 'pr',
    repetitions: 8,
    seed: 1,
    durationSeconds: 10,
  } as unknown as RunReport;

  it('puts the largest significant evidence changes next to the failing metric, largest first', () => {
    expect(topEvidence(report, 'one_fast', 'base').map((c) => c.metric)).toEqual(['broker_gc_us_per_msg', 'broker_cpu_us_per_msg', 'broker_sched_busy']);
    // A tiny share that halved explains nothing; a large one that moved does.
    const shares = {
      ...report,
      evidence: [
        ...report.evidence!,
        cmp('broker_msacc_aux', 0.5, 0.4, 0.6, { baselineMedian: 0.02, candidateMedian: 0.01 }),
        cmp('broker_msacc_port', 1.5, 1.3, 1.7, { baselineMedian: 0.1, candidateMedian: 0.15 }),
      ],
    } as RunReport;
    expect(topEvidence(shares, 'one_fast', 'base').map((c) => c.metric)).toEqual(['broker_msacc_port', 'broker_gc_us_per_msg', 'broker_cpu_us_per_msg', 'broker_sched_busy']);
    const [g] = evidenceForRegressions(report);
    expect(g.lines[0]).toBe('GC time per message +42.0 % [31.0, 55.0]');
    const md = renderComment(report, { name: 'gate' });
    expect(md).toContain('#### What moved inside the broker');
    expect(md).toContain('- **one\\_fast** vs base &lt;b&gt;: GC time per message +42.0 % [31.0, 55.0]; broker CPU per message −25.0 % [−40.0, −20.0]');
    expect(md).not.toContain('memory, binaries'); // its interval includes 1
  });

  it('the HTML report has an "Inside the broker" table per scenario, escaped; the terminal lists the lines', () => {
    const trials = [
      {
        scenario: 'one_fast',
        target: 'head',
        trial: 0,
        order: 0,
        valid: true,
        metrics: {},
        series: [],
        histograms: {},
        topQueues: [{ name: 'q<1>', memoryBytes: 3 * 2 ** 20, reductions: 123456, reductionsPerSecond: 4000, messages: 12 }],
      },
    ];
    const page = renderHtml({
      ...report,
      targets: [],
      trials,
      scenarios: [{ id: 'one_fast', description: 'd', gate: ['consumed_rate'], tolerances: {}, origin: { source: 's', command: 'c' } }],
    } as unknown as RunReport);
    expect(page).toContain('<h3>Inside the broker</h3>');
    expect(page).toContain('base &lt;b&gt;');
    expect(page).not.toContain('base <b>');
    expect(page).toMatch(/GC time per message<\/td>.*<b>\+42\.0 % \[31\.0, 55\.0\]<\/b>/);
    expect(page).toContain('<h3>Largest queue processes</h3>');
    expect(page).toContain('<td>q&lt;1&gt;</td><td class="n">3.00 MiB</td><td class="n">123,456</td>');
    const term = terminalTable(report, false);
    expect(term).toContain('What moved inside the broker\n  one_fast vs base <b>: GC time per message +42.0 % [31.0, 55.0]');
  });

  it('says when nothing moved, and which evidence a target could not provide', () => {
    const quiet = { ...report, evidence: [cmp('broker_sched_busy', 1.01, 0.97, 1.05)] } as RunReport;
    expect(evidenceForRegressions(quiet)[0].none).toBe('no broker evidence moved significantly');
    expect(evidenceGaps(report)).toEqual(['url broker: no cgroup evidence (attached by URL)']);
    const off = { ...report, targets: [{ label: 'quiet', evidence: { sources: [], missing: [{ source: 'all', why: 'evidence: false in the target file' }] } }] } as unknown as RunReport;
    expect(evidenceGaps(off)).toEqual(['quiet: no broker evidence (evidence: false in the target file)']);
    expect(renderComment(quiet, { name: 'gate' })).toContain('<summary>Broker evidence not available</summary>');
  });
});

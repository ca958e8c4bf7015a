// Broker evidence from a real broker: the machine's RabbitMQ service attached by URL offers its
// Prometheus endpoint (the VM's reductions, GC and memory), not the scheduler split until
// microstate accounting is switched on in it, and never cgroup accounting; a trial's evidence is
// read at its window's edges and normalised by the messages it moved. Containers (cgroup CPU,
// msacc switched on by the provider, paired evidence next to a real regression):
// test/integration/anchored-baseline.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attachExisting } from '../../src/broker/existing';
import { runTrial } from '../../src/workload/trial';
import amqp from 'amqplib';
import { readTopQueues } from '../../src/broker/evidence';
import { AMQP_URL, freshVhost, MANAGEMENT_URL, spec } from '../support/broker';

const MSACC = (on: boolean) => execFileSync('rabbitmqctl', ['eval', `erlang:system_flag(microstate_accounting, ${on}), ok.`], { encoding: 'utf8' });
const target = { id: 'local', label: 'local', kind: 'url' as const, amqpUrl: AMQP_URL, managementUrl: MANAGEMENT_URL };
const oneFast = spec('evidence_one_fast', { producers: 1, consumers: 1, queue: 'evidence-q' }, { warmup: 1, duration: 2 });

afterAll(() => {
  MSACC(false);
});

describe('broker evidence on a broker attached by URL', () => {
  it('its Prometheus endpoint gives per-message VM evidence; microstate accounting off and cgroup are said to be missing', async () => {
    MSACC(false);
    const broker = await attachExisting(target);
    expect(broker.info.evidence?.sources).toEqual(['prometheus']);
    expect(broker.info.evidence?.missing.map((m) => m.source)).toEqual(['msacc', 'cgroup']);
    expect(broker.info.evidence?.missing[0].why).toMatch(/microstate_accounting, true/);
    const r = await runTrial({ scenario: oneFast, target: 'local', trial: 0, order: 0 }, broker, `ev${process.pid}`);
    expect(r.valid, r.invalidReason).toBe(true);
    const e = r.evidence!;
    // A message costs the broker thousands of reductions and some garbage collection.
    expect(e.broker_reductions_per_msg).toBeGreaterThan(100);
    expect(e.broker_reductions_per_msg).toBeLessThan(1e6);
    expect(e.broker_gc_words_per_msg).toBeGreaterThan(0);
    expect(e.broker_mem_total_mb).toBeGreaterThan(20);
    expect(e.broker_mem_processes_mb).toBeLessThan(e.broker_mem_total_mb);
    expect(Object.keys(e).filter((k) => /msacc|sched|cpu|disk/.test(k))).toEqual([]);
  }, 60_000);

  it('once microstate accounting is on in the broker, the scheduler split is read too', async () => {
    MSACC(true);
    const broker = await attachExisting(target);
    expect(broker.info.evidence?.sources).toEqual(['prometheus', 'msacc']);
    const r = await runTrial({ scenario: oneFast, target: 'local', trial: 1, order: 1 }, broker, `ev${process.pid}`);
    const e = r.evidence!;
    // Busy scheduler time in cores: above nothing, at most the machine's schedulers.
    expect(e.broker_sched_busy).toBeGreaterThan(0.01);
    expect(e.broker_sched_busy).toBeLessThanOrEqual(broker.info.nodes[0]?.processors ?? 64);
    expect(e.broker_sched_us_per_msg).toBeGreaterThan(0);
    const split = ['emulator', 'gc', 'port', 'check_io', 'aux', 'other'].reduce((sum, s) => sum + e[`broker_msacc_${s}`], 0);
    expect(split).toBeCloseTo(1, 2);
    expect(e.broker_msacc_emulator).toBeGreaterThan(e.broker_msacc_aux);
  }, 60_000);

  it("a trial's largest queue processes come from the management API, by memory, with their reductions", async () => {
    const v = await freshVhost('top-queues');
    const conn = await amqp.connect(v.url);
    try {
      const ch = await conn.createChannel();
      await ch.assertQueue('small', { durable: false });
      await ch.assertQueue('big', { durable: false });
      for (let i = 0; i < 2000; i++) ch.sendToQueue('big', Buffer.alloc(1000));
      ch.sendToQueue('small', Buffer.alloc(10));
      await ch.close();
      // The broker emits queue stats on its statistics interval (5 s by default).
      let top: Awaited<ReturnType<typeof readTopQueues>> = [];
      for (let i = 0; i < 30 && !(top.length === 2 && top.some((q) => q.name === 'big' && q.messages === 2000)); i++) {
        await new Promise((r) => setTimeout(r, 500));
        top = await readTopQueues(v.mgmt, v.vhost);
      }
      // Message bodies over 64 bytes live off the queue process's heap, so two queues can weigh the
      // same: the order is by memory, ties in any order.
      expect(top.map((q) => q.name).sort()).toEqual(['big', 'small']);
      expect(top[0].memoryBytes).toBeGreaterThanOrEqual(top[1].memoryBytes);
      expect(top[1].memoryBytes).toBeGreaterThan(0);
      const big = top.find((q) => q.name === 'big')!;
      expect(big).toMatchObject({ messages: 2000 });
      expect(big.reductions).toBeGreaterThan(0);
    } finally {
      await conn.close();
      await v.drop();
    }
  }, 60_000);

  it('--flame-graph without a same-run A/B of containers says why there is none, and the run goes on', () => {
    const cli = join(resolve(import.meta.dirname, '../..'), 'dist/cli.js');
    const r = spawnSync(
      process.execPath,
      [cli, 'run', '--broker-url', AMQP_URL, '--scenarios', 'one_fast', '--repetitions', '1', '--duration', '1', '--warmup', '0', '--flame-graph', '--baseline-file', 'none.json', '--json'],
      { encoding: 'utf8', timeout: 60_000, cwd: tmpdir() },
    );
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.flameNote).toMatch(/^no flame graph: it compares the two targets of a same-run A\/B/);
    expect(r.stderr).toContain('no flame graph');
    expect(report.trials[0].valid).toBe(true);
  }, 60_000);
});

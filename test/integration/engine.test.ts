// The load engine against the real broker: PerfTest semantics hold and the numbers are sane.
import { afterAll, describe, expect, it } from 'vitest';
import { runWorkload } from '../../src/workload/scenario';
import { freshVhost, spec } from '../support/broker';

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const d of drops) await d();
});

async function vhost(name: string) {
  const v = await freshVhost(name);
  drops.push(v.drop);
  return v;
}

describe('load engine on the real broker', () => {
  it('one_fast: consumed ≈ published, confirmed ≤ published, ordered percentiles', async () => {
    const { url } = await vhost('one-fast');
    const r = await runWorkload(
      spec('one_fast', {
        producers: 1,
        consumers: 1,
        confirm: 3000,
        size: 100,
        persistent: true,
        autoDelete: false,
        queueArgs: { 'x-max-length': 5_000_000 },
      }),
      url,
    );
    expect(r.valid, r.invalidReason).toBe(true);
    const m = r.metrics;
    expect(m.published_rate).toBeGreaterThan(1000);
    expect(m.confirmed_rate).toBeLessThanOrEqual(m.published_rate * 1.05);
    expect(m.consumed_rate).toBeGreaterThan(0);
    expect(m.consumed_rate).toBeLessThanOrEqual(m.published_rate * 1.2);
    for (const p of ['latency', 'confirm_latency']) {
      const ps = ['p50', 'p75', 'p95', 'p99', 'max'].map((q) => m[`${p}_${q}_ms`]);
      expect(ps.every((x) => x > 0)).toBe(true);
      expect([...ps].sort((a, b) => a - b)).toEqual(ps);
    }
    expect(r.series.filter((s) => s.t > 0).length).toBeGreaterThanOrEqual(2);
    expect(r.generator.cpuMicrosPerMessage).toBeGreaterThan(0);
    expect(r.histograms.latency).toMatch(/^[A-Za-z0-9+/=]+$/);
    console.log('one_fast', JSON.stringify(m), JSON.stringify(r.generator));
  });

  it('a 1 msg/s producer sends about one message a second', async () => {
    const { url } = await vhost('slow');
    const r = await runWorkload(spec('slow', { producers: 3, consumers: 1, publishingInterval: 1, confirm: 1 }, { warmup: 1, duration: 4 }), url);
    expect(r.valid, r.invalidReason).toBe(true);
    expect(r.metrics.published_rate).toBeGreaterThanOrEqual(2.5);
    expect(r.metrics.published_rate).toBeLessThanOrEqual(3.5);
    expect(r.metrics.consumed_rate).toBeGreaterThanOrEqual(2.5);
  });

  it('fanout to 10 queues consumes ≈10× what it publishes, with multi-ack', async () => {
    const { url } = await vhost('fanout');
    const r = await runWorkload(
      spec('fanout10', {
        producers: 1,
        consumers: 10,
        confirm: 100,
        exchange: 'amq.fanout',
        exchangeType: 'fanout',
        queuePattern: 'q-%d',
        queuePatternFrom: 1,
        queuePatternTo: 10,
        multiAckEvery: 50,
      }),
      url,
    );
    expect(r.valid, r.invalidReason).toBe(true);
    expect(r.metrics.consumed_rate / r.metrics.published_rate).toBeGreaterThan(8);
    expect(r.metrics.consumed_rate / r.metrics.published_rate).toBeLessThan(12);
  });

  it('5 kB bodies keep their own timestamps (bodies are not reused across in-flight publishes)', async () => {
    const { url } = await vhost('big');
    const r = await runWorkload(spec('big', { producers: 1, consumers: 1, confirm: 200, size: 5000, autoAck: true }), url);
    expect(r.valid, r.invalidReason).toBe(true);
    // A body overwritten while in flight would carry a later timestamp: latencies near 0 or
    // garbage. Sane, ordered, bounded percentiles show every body kept its own send time.
    expect(r.metrics.latency_p50_ms).toBeGreaterThan(0);
    expect(r.metrics.latency_max_ms).toBeLessThan(10_000);
  });
});

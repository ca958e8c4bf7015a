// What a trial counts while it runs: message counters, latency histograms (only inside the
// measured window; warm-up is discarded) and a per-second series. Producers and consumers write
// plain fields here on the hot path; everything derived is computed once at the end.
import { encode, newHistogram, percentileMetrics, type Histogram } from './histogram';

/** Rates and per-message figures are reported to two decimals (one rule for every runner). */
export const round2 = (x: number): number => Math.round(x * 100) / 100;

export interface Counters {
  published: number;
  confirmed: number;
  nacked: number;
  consumed: number;
  returned: number;
}

export class TrialRecorder implements Counters {
  published = 0;
  confirmed = 0;
  nacked = 0;
  consumed = 0;
  returned = 0;
  /** True inside the measured window: latencies are recorded only then. */
  measuring = false;
  readonly latency: Histogram = newHistogram();
  readonly confirmLatency: Histogram = newHistogram();
  readonly errors: string[] = [];

  snapshot(): Counters {
    return { published: this.published, confirmed: this.confirmed, nacked: this.nacked, consumed: this.consumed, returned: this.returned };
  }

  recordLatency(us: number): void {
    if (this.measuring && us >= 0) this.latency.recordValue(Math.max(us, 1));
  }

  recordConfirmLatency(us: number): void {
    if (this.measuring && us >= 0) this.confirmLatency.recordValue(Math.max(us, 1));
  }

  error(message: string): void {
    if (this.errors.length < 20 && !this.errors.includes(message)) this.errors.push(message);
  }
}

/** Samples counter deltas once a second (one timer for the whole trial). */
export class SeriesSampler {
  readonly points: Array<{ t: number; published: number; confirmed: number; consumed: number }> = [];
  private last: Counters;
  private timer?: NodeJS.Timeout;

  /** `windowStartMs` is when the measured window begins, so warm-up samples get t < 0. */
  constructor(
    private readonly rec: TrialRecorder,
    private readonly windowStartMs: number,
    private readonly clock: () => number,
  ) {
    this.last = rec.snapshot();
  }

  start(): void {
    this.timer = setInterval(() => {
      const now = this.rec.snapshot();
      this.points.push({
        t: Math.round((this.clock() - this.windowStartMs) / 100) / 10,
        published: now.published - this.last.published,
        confirmed: now.confirmed - this.last.confirmed,
        consumed: now.consumed - this.last.consumed,
      });
      this.last = now;
    }, 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** What a messaging window measured, from the recorder's counters at its edges: the rates of what
 *  the run has, latency percentiles and their histograms, and the messages the generator's cost is
 *  divided by (one rule for the AMQP 0-9-1 engine and the protocol engine). */
export function windowMetrics(
  rec: TrialRecorder,
  atStart: Counters,
  atEnd: Counters,
  seconds: number,
  has: { producers: boolean; confirms: boolean; consumers: boolean },
): { metrics: Record<string, number>; histograms: Record<string, string>; messages: number } {
  const rate = (k: keyof Counters) => round2((atEnd[k] - atStart[k]) / seconds);
  const metrics: Record<string, number> = {};
  if (has.producers) metrics.published_rate = rate('published');
  if (has.producers && has.confirms) metrics.confirmed_rate = rate('confirmed');
  if (has.consumers) metrics.consumed_rate = rate('consumed');
  Object.assign(metrics, percentileMetrics('latency', rec.latency), percentileMetrics('confirm_latency', rec.confirmLatency));
  const histograms: Record<string, string> = {};
  if (rec.latency.totalCount > 0) histograms.latency = encode(rec.latency);
  if (rec.confirmLatency.totalCount > 0) histograms.confirm_latency = encode(rec.confirmLatency);
  return { metrics, histograms, messages: Math.max(atEnd.consumed - atStart.consumed, atEnd.published - atStart.published, 1) };
}

/** Opens a messaging trial's timeline now: warm-up, then the measured window, and the per-second
 *  series sampling from now on (warm-up points get t < 0). */
export function startTimeline(
  rec: TrialRecorder,
  warmupSeconds: number,
  durationSeconds: number,
  clock: () => number,
): { start: number; windowStart: number; windowEnd: number; sampler: SeriesSampler } {
  const start = clock();
  const windowStart = start + warmupSeconds * 1000;
  const sampler = new SeriesSampler(rec, windowStart, clock);
  sampler.start();
  return { start, windowStart, windowEnd: windowStart + durationSeconds * 1000, sampler };
}

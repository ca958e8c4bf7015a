// The generator watching itself: process CPU time and event-loop delay over the measured
// window, so a trial can say whether the load generator rather than the broker was the limit.
import { monitorEventLoopDelay } from 'node:perf_hooks';

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;

export interface SelfLoadSample {
  cpuMicros: number;
  eventLoopDelayP99Ms: number;
}

export class SelfLoad {
  private cpu?: NodeJS.CpuUsage;
  private loop?: IntervalHistogram;
  private result?: SelfLoadSample;

  start(): void {
    this.loop = monitorEventLoopDelay({ resolution: 10 });
    this.loop.enable();
    this.cpu = process.cpuUsage();
  }

  /** Ends the window (idempotent) and returns what was used during it. */
  stop(): SelfLoadSample {
    if (this.result) return this.result;
    if (!this.cpu || !this.loop) return { cpuMicros: 0, eventLoopDelayP99Ms: 0 };
    const used = process.cpuUsage(this.cpu);
    this.loop.disable();
    this.result = {
      cpuMicros: used.user + used.system,
      eventLoopDelayP99Ms: Math.round(this.loop.percentile(99) / 1e4) / 100,
    };
    return this.result;
  }
}

// The generator watching itself: process CPU time, event-loop utilisation and event-loop delay
// over the measured window, so a trial can say whether the load generator rather than the broker
// was the limit. The window's edges are also announced on a diagnostics channel (free when nobody
// listens), so an outside harness (bench/) can read /proc/<pid>/stat at exactly the same moments
// and observers in the process (broker evidence, a profiler: onNextWindow) act at them too.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;

export interface SelfLoadSample {
  /** Process CPU (user + system, every thread: main loop, workers, GC, libuv) over the window. */
  cpuMicros: number;
  /** Share of the window the generator's event loop spent not idle, 0..1. */
  eventLoopUtilization: number;
  eventLoopDelayP99Ms: number;
}

/** When the generator counts as the limit. Tests may pass lower values to exercise the flag. */
export interface SaturationThresholds {
  /** Event-loop utilisation at or above which the loop had no idle time left (default 0.95). */
  utilization: number;
  /** Event-loop delay p99 above which timers and I/O were served late (default 200 ms). */
  delayP99Ms: number;
}

export const DEFAULT_SATURATION: SaturationThresholds = { utilization: 0.95, delayP99Ms: 200 };

/**
 * True when the generator rather than the broker limited the trial: its event loop was busy
 * (almost) all the time, or callbacks waited long. Whole-process CPU is not the criterion: GC and
 * libuv threads can push it past one core while the loop still idles between bursts.
 */
export function isSaturated(s: SelfLoadSample, t: SaturationThresholds = DEFAULT_SATURATION): boolean {
  return s.eventLoopUtilization >= t.utilization || s.eventLoopDelayP99Ms > t.delayP99Ms;
}

/** Window edges for outside observers: `{ phase: 'start' | 'end', pid }`. */
export const WINDOW_CHANNEL = 'rabbitmq-perf-gate:generator-window';
const windowChannel = channel(WINDOW_CHANNEL);

/**
 * Calls `start` and `end` (once each) at the edges of this process's next announced window, for
 * observers inside the process (broker evidence, a profiler). Returns the unsubscribe, idempotent.
 * Trials run one at a time, so the next window is the running trial's.
 */
export function onNextWindow(h: { start(): void; end(): void }): () => void {
  let phase: 'waiting' | 'open' | 'closed' = 'waiting';
  const onEdge = (message: unknown) => {
    const m = message as { phase?: string; pid?: number };
    if (m.pid !== process.pid) return;
    if (m.phase === 'start' && phase === 'waiting') {
      phase = 'open';
      h.start();
    } else if (m.phase === 'end' && phase === 'open') {
      phase = 'closed';
      h.end();
    }
  };
  subscribe(WINDOW_CHANNEL, onEdge);
  let listening = true;
  return () => {
    if (listening) unsubscribe(WINDOW_CHANNEL, onEdge);
    listening = false;
  };
}

export class SelfLoad {
  private cpu?: NodeJS.CpuUsage;
  private elu?: EventLoopUtilization;
  private loop?: IntervalHistogram;
  private result?: SelfLoadSample;

  start(): void {
    this.loop = monitorEventLoopDelay({ resolution: 10 });
    this.loop.enable();
    if (windowChannel.hasSubscribers) windowChannel.publish({ phase: 'start', pid: process.pid });
    this.cpu = process.cpuUsage();
    this.elu = performance.eventLoopUtilization();
  }

  /** Ends the window (idempotent) and returns what was used during it. */
  stop(): SelfLoadSample {
    if (this.result) return this.result;
    if (!this.cpu || !this.loop || !this.elu) return { cpuMicros: 0, eventLoopUtilization: 0, eventLoopDelayP99Ms: 0 };
    const used = process.cpuUsage(this.cpu);
    const elu = performance.eventLoopUtilization(this.elu).utilization;
    if (windowChannel.hasSubscribers) windowChannel.publish({ phase: 'end', pid: process.pid });
    this.loop.disable();
    this.result = {
      cpuMicros: used.user + used.system,
      eventLoopUtilization: Math.round(elu * 1000) / 1000,
      eventLoopDelayP99Ms: Math.round(this.loop.percentile(99) / 1e4) / 100,
    };
    return this.result;
  }
}

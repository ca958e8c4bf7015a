// The stall watchdog every messaging runner shares (the AMQP 0-9-1 engine and the protocol
// engine): when publishes, confirms and deliveries all stand still for the stall limit while
// producers are due to publish, it records the named stop reason "stalled: …" and aborts the trial.
import type { TrialRecorder } from '../metrics/recorder';
import { nowMs } from './clock';

/** Seconds without any publish, confirm or delivery before a trial is ended as stalled. */
export const STALL_ENV = 'RABBITMQ_PERF_GATE_STALL_SECONDS';
export function stallSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env[STALL_ENV]);
  return Number.isFinite(v) && v > 0 ? v : 10;
}

/**
 * Watches a trial's counters: when publishes, confirms and deliveries all stand still for the
 * stall limit (while producers are due to publish), records "stalled: …" and aborts the trial.
 */
export class Watchdog {
  readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private last = -1;
  private lastAt = 0;
  stalled?: string;

  constructor(
    private readonly rec: TrialRecorder,
    private readonly limitMs: number,
    private readonly waitingFor: () => string,
  ) {}

  start(): void {
    this.lastAt = nowMs();
    this.timer = setInterval(this.check, Math.min(1000, this.limitMs / 4));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private readonly check = (): void => {
    const r = this.rec;
    const progress = r.published + r.confirmed + r.consumed + r.nacked + r.returned;
    const now = nowMs();
    if (progress !== this.last) {
      this.last = progress;
      this.lastAt = now;
      return;
    }
    if (now - this.lastAt < this.limitMs || this.stalled) return;
    this.stalled = `stalled: no progress for ${Math.round(this.limitMs / 1000)} s (${this.waitingFor()})`;
    r.error(this.stalled);
    this.stop();
    this.controller.abort(new Error(this.stalled));
  };
}

// One timer for every fixed-rate producer (PerfTest -r / -P): a timer wheel of 10 ms slots.
// Each due producer publishes every message whose time has come (catching up after a stall, as
// PerfTest's fixed-rate scheduling does), each stamped with its actual send time (PerfTest's
// semantics), in one socket write, then is filed under the slot of its next due time.
// Thousands of slow publishers cost one interval timer, not one timer each.
import { nowMs } from './body';
import type { Producer } from './producer';

const SLOT_MS = 10;

export class RateScheduler {
  private readonly wheel = new Map<number, Producer[]>();
  private timer?: NodeJS.Timeout;
  private cursor = 0;
  /** Messages that were due but had to wait (confirm window full or socket back-pressure). */
  late = 0;

  /** Adds a producer publishing every `intervalMs`, its first message at `firstDue`. */
  add(p: Producer, intervalMs: number, firstDue: number): void {
    p.startScheduled(firstDue, (2 * SLOT_MS) / intervalMs);
    this.intervals.set(p, intervalMs);
    this.file(p);
  }

  private readonly intervals = new Map<Producer, number>();

  start(): void {
    this.cursor = Math.floor(nowMs() / SLOT_MS);
    this.timer = setInterval(this.tick, SLOT_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.wheel.clear();
  }

  private file(p: Producer): void {
    const slot = Math.max(Math.floor(p.nextDue / SLOT_MS), this.cursor + 1);
    const list = this.wheel.get(slot);
    if (list) list.push(p);
    else this.wheel.set(slot, [p]);
  }

  private readonly tick = (): void => {
    const now = nowMs();
    const last = Math.floor(now / SLOT_MS);
    for (; this.cursor <= last; this.cursor++) {
      const due = this.wheel.get(this.cursor);
      if (!due) continue;
      this.wheel.delete(this.cursor);
      for (const p of due) this.fire(p, now);
    }
  };

  private fire(p: Producer, now: number): void {
    const interval = this.intervals.get(p)!;
    while (p.nextDue <= now && p.ready) {
      p.publishOne();
      p.nextDue += interval;
    }
    p.flush();
    if (p.done) return;
    if (p.nextDue <= now) this.late++;
    this.file(p);
  }
}

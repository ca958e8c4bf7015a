// One timer for every fixed-rate producer (PerfTest -r / -P): a timer wheel of 10 ms slots.
// Each due producer publishes every message whose time has come (catching up after a stall, as
// PerfTest's fixed-rate scheduling does), each stamped with its actual send time (PerfTest's
// semantics), in one socket write, then is filed under the slot of its next due time. A producer
// held back by its confirm window (or socket) leaves the wheel: it catches up as soon as the
// confirm or drain that frees it arrives, and files itself again (producer.ts) — thousands of
// waiting -c 1 publishers are not polled every tick. Thousands of slow publishers cost one
// interval timer, not one timer each. Also when producers start, for the steady and the phased
// runner alike: fixed-rate ones spread over one interval, the others at once (startPublishing).
import { nowMs } from './clock';
import type { WorkloadParams } from '../schema/types';
import type { Producer } from './producer';

export const SLOT_MS = 10;

/**
 * Adds fixed-rate producers with their first sends spread over one interval (PerfTest's random
 * start delay), deterministically; +0.5 so that no producer is due exactly on a window edge,
 * where counting it would be a race. The one place both the steady and the phased runner use.
 */
export function scheduleSpread(scheduler: RateScheduler, producers: readonly Producer[], intervalMs: number, start: number): void {
  producers.forEach((p, i) => {
    scheduler.add(p, intervalMs, start + ((i * 0.618034 + 0.5) % 1) * Math.min(intervalMs, 1000));
  });
}

/** A fixed-rate producer's interval in ms (-P wins over -r); 0 = as fast as possible. */
export function publishIntervalMs(w: Pick<WorkloadParams, 'publishingInterval' | 'rate'>): number {
  return w.publishingInterval ? w.publishingInterval * 1000 : w.rate ? 1000 / w.rate : 0;
}

/** Starts publishing: fixed-rate producers on the wheel, spread from `start`; the others flat out. */
export function startPublishing(scheduler: RateScheduler, producers: readonly Producer[], intervalMs: number, start: number): void {
  if (intervalMs > 0) {
    scheduleSpread(scheduler, producers, intervalMs, start);
    scheduler.start();
  } else {
    for (const p of producers) p.startUnlimited();
  }
}

export class RateScheduler {
  private readonly wheel = new Map<number, Producer[]>();
  private timer?: NodeJS.Timeout;
  private cursor = 0;
  /** Adds a producer publishing every `intervalMs`, its first message at `firstDue`. */
  add(p: Producer, intervalMs: number, firstDue: number): void {
    p.startScheduled(firstDue, intervalMs, this);
    this.file(p);
  }

  start(): void {
    // From the earliest slot already filed: a producer added just before a slot boundary must
    // not be left behind the cursor, where no tick would ever visit it.
    let first = Math.floor(nowMs() / SLOT_MS);
    for (const slot of this.wheel.keys()) if (slot < first) first = slot;
    this.cursor = first;
    this.timer = setInterval(this.tick, SLOT_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.wheel.clear();
  }

  /** Files `p` under the slot of its next due time (producers call it after catching up). */
  file(p: Producer): void {
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
      for (const p of due) {
        // false: parked until a confirm or drain frees it, which re-files it.
        if (p.publishDue(now) && !p.done) this.file(p);
      }
    }
  };
}

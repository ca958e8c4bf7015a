// The generator's clock: epoch milliseconds as a double with sub-microsecond resolution,
// comparable across worker threads of one machine. Message bodies carry it as their send time
// (PerfTest's layout, written by src/workload/wire.ts and read back by the consumers).
import { performance } from 'node:perf_hooks';

const ORIGIN = performance.timeOrigin;

export function nowMs(): number {
  return ORIGIN + performance.now();
}

/** Waits until `t` (nowMs() scale), waking at least every 250 ms to notice an abort. */
export async function sleepUntil(t: number, signal?: AbortSignal): Promise<void> {
  while (!signal?.aborted) {
    const left = t - nowMs();
    if (left <= 0) return;
    await new Promise<void>((r) => setTimeout(r, Math.min(left, 250)));
  }
}

// Named reasons a trial stops early or does not count (as PerfTest names its stop reasons), so that
// the runners set and src/workload/trial.ts recognises the same string, and every messaging runner
// (the AMQP 0-9-1 engine, phases, the protocol engine) ranks them the same way. The watchdog's
// "stalled: …" and a trial's time limit carry their figures and are built where they are detected
// (watchdog.ts, trial.ts).
import { round2 as round } from '../metrics/recorder';

export const STOP = {
  /** Any abort the runner itself cannot explain; trial.ts replaces it with the caller's reason. */
  cancelled: 'trial was cancelled',
} as const;

/** Fixed-rate producers must reach this share of their target rate for a trial to count. */
export const MIN_RATE_SHARE = 0.95;

/** Why a fixed-rate trial does not count (its producers fell short of the target), or undefined. */
export function belowTargetRate(achieved: number, target: number): string | undefined {
  return achieved < MIN_RATE_SHARE * target ? `generator reached ${round(achieved)} of its target ${round(target)} msg/s (below ${MIN_RATE_SHARE * 100} %)` : undefined;
}

/** The first reason a messaging trial does not count, in the order every runner uses: a stall,
 *  the clients' errors, an abort, a fixed rate not reached. */
export function messagingStopReason(s: { stalled?: string; errors: string[]; aborted: boolean; rate?: { achieved: number; target: number } }): string | undefined {
  if (s.stalled) return s.stalled;
  if (s.errors.length) return s.errors.join('; ');
  if (s.aborted) return STOP.cancelled;
  return s.rate ? belowTargetRate(s.rate.achieved, s.rate.target) : undefined;
}

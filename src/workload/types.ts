// The workload stage's shared types: what a workload run returns, where a trial runs, and the
// hooks the messaging engine (engine.ts) calls at the window's edges. Every runner (the scenario
// kinds in scenario.ts' table) imports them from here, so the folder has no import cycle.
import type { BrokerHandle } from '../broker/provider';
import type { GeneratorLoad, SeriesPoint, TargetInfo } from '../schema/types';

export interface WorkloadResult {
  metrics: Record<string, number>;
  series: SeriesPoint[];
  histograms: Record<string, string>;
  generator: GeneratorLoad;
  valid: boolean;
  invalidReason?: string;
}

/** Where the trial runs, for what needs the management API, and the target's capabilities. */
export interface TrialContext {
  managementUrl: string;
  vhost: string;
  /** The target's node restart (restart scenarios); absent where the broker may not be restarted. */
  restartNode?: BrokerHandle['restartNode'];
  /** Where the target speaks streams, MQTT and AMQP 1.0 (protocol scenarios). */
  endpoints?: TargetInfo['endpoints'];
}

/** Called by the window engine at the measured window's edges. */
export interface WindowHooks {
  /** As the window opens (not awaited). */
  windowStart?(): void;
  /** As the window closes, before producers stop: extra metrics and a reason to invalidate. */
  windowEnd?(window: { published: number; consumed: number; seconds: number }): Promise<{ metrics?: Record<string, number>; invalidReason?: string }>;
}

// Named reasons a trial stops early (as PerfTest names its stop reasons), so that the runners set
// and src/workload/trial.ts recognises the same string. The watchdog's "stalled: …" and a trial's
// time limit carry their figures and are built where they are detected (engine.ts, trial.ts).
export const STOP = {
  /** Any abort the runner itself cannot explain; trial.ts replaces it with the caller's reason. */
  cancelled: 'trial was cancelled',
} as const;

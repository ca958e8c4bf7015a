// How the pipeline talks to whoever runs it (the action's log, the CLI's terminal): shared by every
// stage that reports progress, so none of them has to import the pipeline for it.
import type { TrialResult } from './types';

export interface Ui {
  info(message: string): void;
  warn(message: string): void;
  group<T>(name: string, fn: () => Promise<T>): Promise<T>;
  trialDone(done: number, total: number, trial: TrialResult, etaSeconds: number): void;
}

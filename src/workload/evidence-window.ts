// Ties a target's evidence capture (src/broker/evidence.ts) to a trial's measured window: every
// runner announces the window's edges through SelfLoad (src/metrics/selfload.ts, a diagnostics
// channel that costs nothing when nobody listens; onNextWindow), and a reading is started at each
// edge without holding the runner.
import type { EvidenceCapture } from '../broker/evidence';
import { deriveEvidence, type EvidenceReading, workUnits } from '../metrics/evidence';
import { onNextWindow } from '../metrics/selfload';

export interface EvidenceWindow {
  /** Stops listening (idempotent); readings already started still complete. */
  close(): void;
  /** The evidence metrics of the window, normalised by the work in `metrics`; undefined when the
   *  window was not announced or a reading failed. */
  result(metrics: Record<string, number>): Promise<Record<string, number> | undefined>;
}

export function evidenceWindow(capture: EvidenceCapture): EvidenceWindow {
  let start: Promise<EvidenceReading | undefined> | undefined;
  let end: Promise<EvidenceReading | undefined> | undefined;
  const read = () => capture.read().catch(() => undefined);
  const close = onNextWindow({
    start: () => {
      start = read();
    },
    end: () => {
      end = read();
    },
  });
  return {
    close,
    async result(metrics) {
      close();
      const [a, b] = await Promise.all([start, end]);
      if (!a || !b) return undefined;
      const seconds = (b.at - a.at) / 1000;
      const out = deriveEvidence(a, b, workUnits(metrics, seconds));
      return Object.keys(out).length ? out : undefined;
    },
  };
}

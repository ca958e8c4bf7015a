// Owns "one target at a time" during a same-run A/B: before each trial, the target it runs on is
// thawed and every other target that can be frozen (docker targets: `docker pause`) is frozen,
// so an idle broker's background work (stats, GC, schedulers spinning down) never shares the
// runner's cores with the measured one. A runner where freezing fails (no cgroup freezer) is
// warned about once and then left unfrozen: the run goes on, only noisier.
import { describeError } from '../schema/errors';
import type { BrokerHandle } from './provider';

export interface Focus {
  /** Thaws `active` and freezes the others. Never throws. */
  on(active: BrokerHandle): Promise<void>;
  /** Whether idle targets are being frozen (false once a freeze failed, or when disabled). */
  readonly freezing: boolean;
}

export function focusOn(handles: BrokerHandle[], warn: (m: string) => void, enabled = true): Focus {
  let freezing = enabled && handles.filter((h) => h.setFrozen).length > 1;
  return {
    get freezing() {
      return freezing;
    },
    async on(active) {
      if (!freezing) return;
      try {
        for (const h of handles) if (h !== active) await h.setFrozen?.(true);
        await active.setFrozen?.(false);
      } catch (err) {
        freezing = false;
        warn(`could not freeze the idle target between trials (${describeError(err)}); the targets stay running, which adds noise`);
        for (const h of handles) await h.setFrozen?.(false).catch(() => undefined);
      }
    },
  };
}

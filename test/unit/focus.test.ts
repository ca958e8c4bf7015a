// One target at a time (src/broker/focus.ts): the order of freeze and thaw calls, targets that
// cannot be frozen (a broker attached by URL), and a runner whose freezer fails: one warning,
// everything thawed, no more attempts. The handles are plain records of calls: the real docker
// pause/unpause is exercised in test/integration/docker.test.ts.
import { describe, expect, it } from 'vitest';
import { focusOn } from '../../src/broker/focus';
import type { BrokerHandle } from '../../src/broker/provider';

function handle(id: string, calls: string[], fail = false, freezable = true): BrokerHandle {
  return {
    info: { id } as BrokerHandle['info'],
    amqpUrl: '',
    managementUrl: '',
    stop: async () => undefined,
    ...(freezable
      ? {
          setFrozen: async (on: boolean) => {
            if (fail && on) throw new Error('freezer not available');
            calls.push(`${on ? 'freeze' : 'thaw'} ${id}`);
          },
        }
      : {}),
  };
}

describe('focusOn', () => {
  it('freezes the idle targets, then thaws the active one', async () => {
    const calls: string[] = [];
    const [a, b] = [handle('a', calls), handle('b', calls)];
    const f = focusOn([a, b], () => undefined);
    await f.on(a);
    await f.on(b);
    expect(calls).toEqual(['freeze b', 'thaw a', 'freeze a', 'thaw b']);
    expect(f.freezing).toBe(true);
  });

  it('does nothing with one target, when disabled, or when fewer than two targets can be frozen', async () => {
    const calls: string[] = [];
    const a = handle('a', calls);
    await focusOn([a], () => undefined).on(a);
    await focusOn([a, handle('b', calls)], () => undefined, false).on(a);
    const url = handle('url', calls, false, false);
    const mixed = focusOn([a, url], () => undefined);
    await mixed.on(url);
    expect(calls).toEqual([]);
    expect(mixed.freezing).toBe(false);
  });

  it('a failing freeze warns once, thaws everything and stops trying', async () => {
    const calls: string[] = [];
    const warnings: string[] = [];
    const [a, b] = [handle('a', calls, true), handle('b', calls, true)];
    const f = focusOn([a, b], (m) => warnings.push(m));
    await f.on(a);
    await f.on(b);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not freeze the idle target .*freezer not available.*stay running/);
    expect(calls).toEqual(['thaw a', 'thaw b']);
    expect(f.freezing).toBe(false);
  });
});

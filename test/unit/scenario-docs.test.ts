// docs/scenarios.md is generated from the scenario files; this fails when someone changed a
// scenario (or the renderer) without regenerating it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderScenarioDocs } from '../../scripts/scenario-docs';
import { packagePath } from '../../src/config/paths';

describe('docs/scenarios.md', () => {
  it('is up to date with scenarios/*.yml (run: node scripts/gen-scenario-docs.mjs)', () => {
    const current = readFileSync(packagePath('docs/scenarios.md'), 'utf8');
    const fresh = renderScenarioDocs();
    if (current !== fresh) {
      expect.fail('docs/scenarios.md is out of date: run node scripts/gen-scenario-docs.mjs and commit the result');
    }
  });

  it('says what each scenario measures, its origin command and its trimmed parameters', () => {
    const doc = renderScenarioDocs();
    expect(doc).toContain('### seven_thousand_slow_one_queue');
    expect(doc).toContain('perf_test seven_thousand_slow_one_queue -x 7000 -y 7 -P 1 -c 1');
    expect(doc).toMatch(/\*\*Trimmed:\*\* producers 350 · consumers 1/);
    expect(doc).toContain('### node_start_classic_queues');
    expect(doc).toMatch(/\*\*Restart:\*\* queues=1000,queueType=classic,durable=true/);
  });
});

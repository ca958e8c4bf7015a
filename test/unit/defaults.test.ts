// action.yml states each input's default for users; src/config/defaults.ts is what the code uses.
// They must agree, input by input, and every default action.yml states must be covered.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ACTION_INPUT_DEFAULTS } from '../../src/config/defaults';

const action = parse(readFileSync(join(__dirname, '../../action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> };

describe('input defaults', () => {
  it('action.yml states the defaults the code uses', () => {
    for (const [input, value] of Object.entries(ACTION_INPUT_DEFAULTS)) expect(String(action.inputs[input]?.default), input).toBe(value);
  });
  it('every default action.yml states is one the code knows (github-token aside: the runner fills it)', () => {
    const stated = Object.entries(action.inputs)
      .filter(([, i]) => i.default !== undefined)
      .map(([name]) => name)
      .filter((n) => n !== 'github-token');
    expect(stated.sort()).toEqual(Object.keys(ACTION_INPUT_DEFAULTS).sort());
  });
});

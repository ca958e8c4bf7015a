// The scenario catalogue: presets (scenarios/presets.yml) and scenario files (scenarios/*.yml,
// or the user's own files and folders). Resolves the `scenarios` input — a preset name, a path,
// or comma-separated scenario ids — into ScenarioSpecs.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import type { ScenarioSpec } from '../schema/types';
import { GateError } from './errors';
import { packagePath } from './paths';
import { loadScenarioFile, parseYaml, lineOf } from './scenario-file';

export interface Preset {
  name: string;
  description: string;
  scenarios: string[];
}

export function loadPresets(): Preset[] {
  const file = packagePath('scenarios/presets.yml');
  const { doc, lines, data } = parseYaml(readFileSync(file, 'utf8'), file);
  const schema = JSON.parse(readFileSync(packagePath('schema/presets.schema.json'), 'utf8'));
  const check = new Ajv({ strict: false }).compile(schema);
  if (!check(data)) {
    const e = check.errors![0];
    throw new GateError(e.message ?? 'invalid', { file, line: lineOf(doc, lines, e.instancePath) });
  }
  return Object.entries(data as Record<string, Omit<Preset, 'name'>>).map(([name, p]) => ({ name, ...p }));
}

function catalogueFile(id: string): string {
  return packagePath(`scenarios/${id}.yml`);
}

export function catalogueIds(): string[] {
  return readdirSync(packagePath('scenarios'))
    .filter((f) => f.endsWith('.yml') && f !== 'presets.yml')
    .map((f) => f.slice(0, -4))
    .sort();
}

function loadDir(dir: string): ScenarioSpec[] {
  return readdirSync(dir).filter((f) => /\.ya?ml$/.test(f) && f !== 'presets.yml').sort().map((f) => loadScenarioFile(join(dir, f)));
}

/**
 * `value` is a preset name, a path to a scenario file or folder (relative to `cwd`), or
 * comma-separated catalogue ids. Returns the scenarios and the name to show for the selection.
 */
export function resolveScenarios(value: string, cwd = process.cwd()): { name: string; scenarios: ScenarioSpec[] } {
  const v = value.trim() || 'pr';
  const preset = loadPresets().find((p) => p.name === v);
  if (preset) return { name: preset.name, scenarios: preset.scenarios.map((id) => loadScenarioFile(catalogueFile(id))) };
  const path = resolve(cwd, v);
  if (/[/\\]|\.ya?ml$/.test(v) || existsSync(path)) {
    if (!existsSync(path)) throw new GateError(`scenario path "${v}" does not exist`, { field: 'scenarios' }, 'give a preset name, a scenario file, or a folder of them');
    const scenarios = statSync(path).isDirectory() ? loadDir(path) : [loadScenarioFile(path)];
    if (!scenarios.length) throw new GateError(`no scenario files (*.yml) in "${v}"`, { field: 'scenarios' });
    return { name: v, scenarios: dedupe(scenarios) };
  }
  const ids = v.split(',').map((s) => s.trim()).filter(Boolean);
  const known = new Set(catalogueIds());
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length) {
    throw new GateError(`unknown preset or scenario "${unknown.join('", "')}"`, { field: 'scenarios' },
      `use a preset (${loadPresets().map((p) => p.name).join(', ')}), a scenario id (${[...known].join(', ')}), or a path to a scenario file`);
  }
  return { name: v, scenarios: ids.map((id) => loadScenarioFile(catalogueFile(id))) };
}

function dedupe(specs: ScenarioSpec[]): ScenarioSpec[] {
  const seen = new Map<string, string>();
  for (const s of specs) {
    const prev = seen.get(s.id);
    if (prev) throw new GateError(`scenario id "${s.id}" is used twice (also in ${prev})`, { file: s.file, line: s.lines.id, field: 'id' }, 'give each scenario a unique id');
    seen.set(s.id, s.file);
  }
  return specs;
}

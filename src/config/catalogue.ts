// The scenario catalogue: presets (scenarios/presets.yml) and scenario files (scenarios/*.yml,
// or the user's own files and folders). Resolves the `scenarios` input — a preset name, a path,
// or comma-separated scenario ids — into ScenarioSpecs. A file id selects every axis combination
// of its file; an expanded id (one_fast[size=100,queue=quorum]) selects one.
import { DEFAULTS } from './defaults';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import type { ScenarioSpec } from '../schema/types';
import { GateError } from '../schema/errors';
import { packagePath } from './paths';
import { loadScenarioFile, parseYaml, lineOf, type LoadOptions } from './scenario-file';

export interface Preset {
  name: string;
  description: string;
  scenarios: string[];
  /** Per-preset window / warm-up overrides (seconds), e.g. to keep smoke under a minute. */
  warmup?: number;
  duration?: number;
  /** Pairs a same-run A/B of this preset runs by default: enough for the detection power measured
   *  in docs/statistics.md, not just for significance to be reachable. */
  pairs?: number;
  /** A same-run A/B of this preset is group-sequential: judged at these pairs, stopping each
   *  scenario once decided (src/compare/sequential.ts); the last is the cap. */
  looks?: number[];
  /** Tolerance of every gating metric of the preset's scenarios, as a fraction (strict: 0.02). */
  tolerance?: number;
  /** Equivalence margin of every gating metric of the preset's scenarios (src/compare/margins.ts). */
  margin?: number;
}

/** A resolved `scenarios` input: its scenarios, the name to show, and a preset's A/B pairs and looks. */
export interface Selection {
  name: string;
  scenarios: ScenarioSpec[];
  pairs?: number;
  looks?: number[];
}

let presetsValidator: ReturnType<Ajv['compile']> | undefined;

export function loadPresets(): Preset[] {
  const file = packagePath('scenarios/presets.yml');
  const { doc, lines, data } = parseYaml(readFileSync(file, 'utf8'), file);
  // Compiled once per process (an Ajv compile costs tens of ms, and every resolve reads the presets).
  presetsValidator ??= new Ajv({ strict: false }).compile(JSON.parse(readFileSync(packagePath('schema/presets.schema.json'), 'utf8')));
  const check = presetsValidator;
  if (!check(data)) {
    const e = check.errors![0];
    throw new GateError(e.message ?? 'invalid', { file, line: lineOf(doc, lines, e.instancePath), field: e.instancePath.slice(1).replace(/\//g, '.') });
  }
  return Object.entries(data as Record<string, Omit<Preset, 'name'>>).map(([name, p]) => ({ name, ...p }));
}

function catalogueFile(id: string): string {
  return packagePath(`scenarios/${id}.yml`);
}

/** Ids of the catalogue's scenario files (each may expand to several scenarios). */
export function catalogueIds(): string[] {
  return readdirSync(packagePath('scenarios'))
    .filter((f) => f.endsWith('.yml') && f !== 'presets.yml')
    .map((f) => f.slice(0, -4))
    .sort();
}

/** Every scenario of the catalogue, expanded over its axes. */
export function loadCatalogue(opts: LoadOptions = {}): ScenarioSpec[] {
  return dedupe(catalogueIds().flatMap((id) => loadScenarioFile(catalogueFile(id), opts)));
}

function loadDir(dir: string, opts: LoadOptions): ScenarioSpec[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'presets.yml')
    .sort()
    .flatMap((f) => loadScenarioFile(join(dir, f), opts));
}

/** Splits "a,b[size=1,queue=quorum],c" on the commas outside brackets. */
export function splitIds(value: string): string[] {
  return value
    .split(/,(?![^[\]]*\])/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Specs for catalogue ids: file ids give all their expansions, expanded ids one. */
function byIds(ids: string[], opts: LoadOptions): ScenarioSpec[] {
  const known = new Set(catalogueIds());
  const unknown = ids.filter((id) => !known.has(id.replace(/\[.*$/, '')));
  if (unknown.length) {
    throw new GateError(
      `unknown preset or scenario "${unknown.join('", "')}"`,
      { field: 'scenarios' },
      `use a preset (${loadPresets()
        .map((p) => p.name)
        .join(', ')}), a scenario id (${[...known].join(', ')}), or a path to a scenario file`,
    );
  }
  const cache = new Map<string, ScenarioSpec[]>();
  const fileSpecs = (base: string) => cache.get(base) ?? cache.set(base, loadScenarioFile(catalogueFile(base), opts)).get(base)!;
  return dedupe(
    ids.flatMap((id) => {
      const base = id.replace(/\[.*$/, '');
      const specs = fileSpecs(base);
      if (id === base) return specs;
      const one = specs.find((s) => s.id === id);
      if (!one) throw new GateError(`scenario file ${base} has no "${id}"`, { field: 'scenarios' }, `use one of ${specs.map((s) => s.id).join(', ')}`);
      return [one];
    }),
  );
}

/**
 * `value` is a preset name, a path to a scenario file or folder (relative to `cwd`), or
 * comma-separated catalogue ids. Returns the scenarios and the name to show for the selection.
 */
export function resolveScenarios(value: string, cwd = process.cwd(), opts: LoadOptions = {}): Selection {
  const v = value.trim() || DEFAULTS.scenarios;
  const preset = loadPresets().find((p) => p.name === v);
  if (preset) {
    const scenarios = byIds(preset.scenarios, opts).map((s) => ({
      ...s,
      warmupSeconds: preset.warmup ?? s.warmupSeconds,
      durationSeconds: preset.duration ?? s.durationSeconds,
      tolerances: preset.tolerance === undefined ? s.tolerances : { ...s.tolerances, ...Object.fromEntries(s.gate.map((m) => [m, preset.tolerance!])) },
      ...(preset.margin === undefined ? {} : { margins: { ...s.margins, ...Object.fromEntries(s.gate.map((m) => [m, preset.margin!])) } }),
    }));
    return { name: preset.name, scenarios, pairs: preset.pairs, looks: preset.looks };
  }
  const path = resolve(cwd, v);
  if (/[/\\]|\.ya?ml$/.test(v) || existsSync(path)) {
    if (!existsSync(path)) throw new GateError(`scenario path "${v}" does not exist`, { field: 'scenarios' }, 'give a preset name, a scenario file, or a folder of them');
    const scenarios = statSync(path).isDirectory() ? loadDir(path, opts) : loadScenarioFile(path, opts);
    if (!scenarios.length) throw new GateError(`no scenario files (*.yml) in "${v}"`, { field: 'scenarios' });
    return { name: v, scenarios: dedupe(scenarios) };
  }
  return { name: v, scenarios: byIds(splitIds(v), opts) };
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

// `list`: the presets with their trial counts and time estimates (alone, and as an A/B — fixed or
// sequential), and every scenario with its window and variants; --json for scripts.
import { catalogueIds, loadPresets, resolveScenarios } from '../config/catalogue';
import { abEstimate } from '../compare/sequential';
import { defaultRepetitions } from '../compare/compare';
import { estimateSeconds, buildPlan } from '../plan/plan';
import type { Values } from './shared';

export function listCommand(v: Values): number {
  const presets = loadPresets().map((p) => {
    const { scenarios } = resolveScenarios(p.name);
    const repetitions = defaultRepetitions(scenarios);
    const ab = abEstimate(scenarios, p.pairs, p.looks);
    return {
      name: p.name,
      description: p.description,
      scenarios: scenarios.map((s) => s.id),
      repetitions,
      secondsPerTarget: Math.round(estimateSeconds(buildPlan(scenarios, ['candidate'], repetitions, 1))),
      abRepetitions: ab.pairs,
      abSeconds: ab.seconds,
      ...(ab.looks ? { abLooks: ab.looks, abSecondsFirstLook: ab.firstSeconds, abSecondsCap: ab.capSeconds } : {}),
    };
  });
  const scenarios = catalogueIds().map((id) => {
    const specs = resolveScenarios(id).scenarios;
    const s = specs[0];
    return { id, variants: specs.map((x) => x.id), warmupSeconds: s.warmupSeconds, durationSeconds: s.durationSeconds, gate: s.gate, description: s.description };
  });
  if (v.json) {
    process.stdout.write(JSON.stringify({ presets, scenarios }, null, 1) + '\n');
    return 0;
  }
  const lines = ['Presets:'];
  for (const p of presets) {
    lines.push(
      `  ${p.name.padEnd(10)} ${String(p.scenarios.length).padStart(3)} scenarios, ~${Math.ceil(p.secondsPerTarget / 60)} min alone (${p.repetitions} trials), ` +
        (p.abLooks
          ? `~${Math.ceil(p.abSecondsFirstLook! / 60)}–${Math.ceil(p.abSecondsCap! / 60)} min A/B (sequential, ${p.abLooks[0]}–${p.abLooks.at(-1)} pairs; fixed ${p.abRepetitions} pairs ~${Math.ceil(p.abSeconds / 60)} min)`
          : `~${Math.ceil(p.abSeconds / 60)} min A/B (${p.abRepetitions} pairs)`) +
        ` — ${p.description}`,
    );
  }
  lines.push('', "Scenarios (warm-up + measured seconds; ×N: variants over the file's axes):");
  for (const s of scenarios) {
    const text = s.description.replace(/\s+/g, ' ');
    const short = text.length > 80 ? `${text.slice(0, 79).replace(/\s+\S*$/, '')}…` : text;
    const variants = s.variants.length > 1 ? `×${s.variants.length}` : '';
    lines.push(`  ${s.id.padEnd(30)} ${`${s.warmupSeconds}+${s.durationSeconds} s`.padEnd(7)} ${variants.padEnd(3)} ${short}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

// Narrowing a parsed scenario to its kind in tests: fails (naming both kinds) when the spec is
// another kind, and otherwise returns it typed with that kind's own block (phases, churn, ...).
import type { ScenarioKind, ScenarioSpec } from '../../src/schema/types';

export function ofKind<K extends ScenarioKind>(s: ScenarioSpec, kind: K): Extract<ScenarioSpec, { kind: K }> {
  if (s.kind !== kind) throw new Error(`scenario ${s.id} is kind ${s.kind}, not ${kind}`);
  return s as Extract<ScenarioSpec, { kind: K }>;
}

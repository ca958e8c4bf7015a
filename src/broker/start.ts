// Picks the provider for a target: attach to an existing broker by URL, or start containers.
import type { TargetSpec } from '../schema/types';
import { GateError } from '../config/errors';
import { attachExisting } from './existing';
import type { BrokerHandle } from './provider';

export async function startTarget(spec: TargetSpec, _runId: string): Promise<BrokerHandle> {
  if (spec.kind === 'url') return attachExisting(spec);
  throw new GateError(`target "${spec.id}": docker targets are not available in this build`);
}

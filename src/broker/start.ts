// Picks the provider for a target: attach to an existing broker by URL, or start containers.
import type { TargetSpec } from '../schema/types';
import { attachExisting } from './existing';
import { startDocker } from './docker';
import type { BrokerHandle } from './provider';

export async function startTarget(spec: TargetSpec, runId: string, log?: (line: string) => void, profile = false): Promise<BrokerHandle> {
  if (spec.kind === 'url') return attachExisting(spec);
  return startDocker(spec, { runId, log, profile });
}

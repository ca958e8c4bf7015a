// Picks the provider for a target: attach to an existing broker by URL, or start containers.
import type { TargetSpec } from '../schema/types';
import { attachExisting } from './existing';
import { type DockerProviderOptions, startDocker } from './docker';
import type { BrokerHandle } from './provider';

export async function startTarget(spec: TargetSpec, opts: DockerProviderOptions = {}): Promise<BrokerHandle> {
  if (spec.kind === 'url') return attachExisting(spec);
  return startDocker(spec, opts);
}

// The environment fingerprint recorded with every run and baseline: tool, Node, OS, kernel, CPU
// model, core count, memory. Comparisons with a stored baseline from a different machine may
// warn but never fail.
import os from 'node:os';
import type { Fingerprint, TargetInfo } from '../schema/types';

export const TOOL = 'rabbitmq-perf-gate';
// Replaced at bundle time with package.json's version; the fallback serves tests run from src/.
declare const __VERSION__: string | undefined;
export const TOOL_VERSION = typeof __VERSION__ === 'string' ? __VERSION__ : '0.0.0-dev';

export function fingerprint(): Fingerprint {
  const cpus = os.cpus();
  return {
    tool: TOOL,
    toolVersion: TOOL_VERSION,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    kernel: os.release(),
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    cores: os.availableParallelism?.() ?? cpus.length,
    memoryBytes: os.totalmem(),
  };
}

/** Why two runs are not like for like, or undefined when they are. */
export function fingerprintMismatch(stored: Fingerprint, storedTarget: TargetInfo | undefined, now: Fingerprint, nowTarget: TargetInfo): string | undefined {
  const diffs: string[] = [];
  if (stored.cpuModel !== now.cpuModel) diffs.push(`CPU model (${stored.cpuModel} → ${now.cpuModel})`);
  if (stored.cores !== now.cores) diffs.push(`core count (${stored.cores} → ${now.cores})`);
  if (storedTarget && storedTarget.rabbitmqVersion !== nowTarget.rabbitmqVersion) {
    diffs.push(`RabbitMQ version (${storedTarget.rabbitmqVersion} → ${nowTarget.rabbitmqVersion})`);
  }
  return diffs.length ? `the runner differs from the baseline's: ${diffs.join(', ')}` : undefined;
}

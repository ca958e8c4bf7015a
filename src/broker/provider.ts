// The broker stage's contract. A provider turns a TargetSpec into a running, reachable broker
// (attaching to an existing one or starting containers) and removes whatever it started.
// Later stages only see BrokerHandle: URLs to talk to and the TargetInfo to record.
import type { TargetInfo, TargetSpec } from '../schema/types';

export interface BrokerHandle {
  info: TargetInfo;
  /** Full AMQP URL including credentials (never written to reports; mask it in logs). */
  amqpUrl: string;
  /** Management API base URL including credentials, e.g. http://guest:guest@127.0.0.1:15672 */
  managementUrl: string;
  /** Stops and removes everything this provider started for the target. Idempotent. */
  stop(): Promise<void>;
}

export interface BrokerProvider {
  start(spec: TargetSpec): Promise<BrokerHandle>;
}

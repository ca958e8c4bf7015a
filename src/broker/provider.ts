// The broker stage's contract. A provider (src/broker/start.ts picks one) turns a TargetSpec into a running, reachable broker
// (attaching to an existing one or starting containers) and removes whatever it started.
// Later stages only see BrokerHandle: URLs to talk to, the TargetInfo to record, and optional
// capabilities such as restarting a node (only where this tool started the broker itself).
import type { RestartMethod, TargetInfo } from '../schema/types';
import type { NodeRuntime } from './effective';
import type { EvidenceCapture } from './evidence';
import type { ProfileSession } from './profile';

export interface BrokerHandle {
  info: TargetInfo;
  /** Full AMQP URL including credentials (never written to reports; mask it in logs). */
  amqpUrl: string;
  /** Management API base URL including credentials, e.g. http://guest:guest@127.0.0.1:15672 */
  managementUrl: string;
  /** Restarts node 1 in place by each method it offers (RestartMethod: its container, single
   *  nodes only; its RabbitMQ application, clusters too), keeping its data (durable queues,
   *  policies, feature flags), and times it. Only providers that started the broker offer it: a
   *  broker attached by URL is never restarted. Each resolves once the node accepts AMQP and its
   *  management API answers again. */
  restartNode?: Partial<Record<RestartMethod, () => Promise<NodeRestart>>>;
  /** Freezes (true) or thaws (false) every node of the target (cgroup freezer, `docker pause`):
   *  a frozen broker uses no CPU, so an idle target cannot disturb the other target's trial.
   *  Idempotent. Only providers that started the broker offer it. */
  setFrozen?(frozen: boolean): Promise<void>;
  /** Node 1's runtime settings — its `rabbit` application env, the Erlang VM (emulator flags,
   *  schedulers, limits, allocators) and the plugins running — parsed, secrets masked
   *  (src/broker/effective.ts). Only where this tool can run rabbitmqctl on the node. */
  nodeRuntime?(): Promise<NodeRuntime>;
  /** Reads the broker's evidence (Prometheus, cgroup accounting) at a window's edges
   *  (src/broker/evidence.ts); absent when nothing can be read. */
  evidence?: EvidenceCapture;
  /** A perf recording of node 1 for a differential flame graph; only containers started for it
   *  (`+JPperf true`, src/broker/profile.ts). */
  profile?(): ProfileSession;
  /** Stops and removes everything this provider started for the target. Idempotent. */
  stop(): Promise<void>;
}

/** What one node restart took. */
export interface NodeRestart {
  /** From asking the node to stop until it had exited (method app: until stop_app returned). */
  stopSeconds: number;
  /** From starting it again until it accepted AMQP and its management API answered. */
  startSeconds: number;
  /** The node did not stop within the grace period and was killed: the start was a crash recovery. */
  killed: boolean;
}

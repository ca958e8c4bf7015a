// Declares what a workload needs, the way PerfTest does: the exchange (unless it is a built-in
// one), each queue with its arguments, and a binding per queue keyed by the queue name.
import type { Channel } from 'amqplib';
import type { WorkloadParams } from '../schema/types';

/** Queue names: the -qp printf pattern expanded over [from, to], or the single -u queue. */
export function queueNames(w: WorkloadParams): string[] {
  if (!w.queuePattern) return [w.queue];
  const names: string[] = [];
  for (let i = w.queuePatternFrom; i <= w.queuePatternTo; i++) names.push(w.queuePattern.replace(/%d/g, String(i)));
  return names;
}

export function routingKeyFor(w: WorkloadParams, queue: string): string {
  return w.routingKey ?? queue;
}

function isBuiltIn(exchange: string): boolean {
  return exchange === '' || exchange.startsWith('amq.');
}

export async function declareTopology(ch: Channel, w: WorkloadParams): Promise<string[]> {
  const queues = queueNames(w);
  if (w.predeclared) return queues;
  if (!isBuiltIn(w.exchange)) await ch.assertExchange(w.exchange, w.exchangeType, { durable: true, autoDelete: false });
  // PerfTest declares queues durable exactly when messages are persistent (-f persistent).
  const durable = w.persistent || w.queueArgs['x-queue-type'] === 'quorum' || w.queueArgs['x-queue-type'] === 'stream';
  for (const q of queues) {
    await ch.assertQueue(q, { durable, autoDelete: w.autoDelete, exclusive: w.exclusive, arguments: w.queueArgs });
    if (w.exchange !== '') await ch.bindQueue(q, w.exchange, routingKeyFor(w, q));
  }
  return queues;
}

// One PerfTest consumer on its own channel: prefetch, autoAck, ack every N with multiple=true,
// or nack with/without requeue. Records end-to-end latency from the body's send time. The
// client under it is a transport (transport.ts: the fast path or plain amqplib); either way the
// broker sees one basic.ack per message (or per N with multiple=true), as from PerfTest.
import type { Channel } from 'amqplib';
import type { WorkloadParams } from '../schema/types';
import type { TrialRecorder } from '../metrics/recorder';
import { nowMs } from './clock';
import { consumeTransport, type ConsumeSetup, type ConsumeTransport } from './transport';

export class Consumer {
  private unacked = 0;
  private tag?: string;
  private readonly every: number;
  private readonly transport: ConsumeTransport;

  constructor(
    private readonly ch: Channel,
    private readonly w: WorkloadParams,
    private readonly queue: string,
    private readonly rec: TrialRecorder,
    /** The client under this consumer (tests pass a fake); by default the process's transport. */
    transport?: (setup: ConsumeSetup) => ConsumeTransport,
  ) {
    this.every = w.nack || w.multiAckEvery <= 1 ? 1 : w.multiAckEvery;
    const setup: ConsumeSetup = {
      queue,
      noAck: w.autoAck,
      multiple: this.every > 1,
      nack: w.nack,
      requeue: w.requeue,
      onDelivery: this.onDelivery,
      onCancel: () => this.rec.error(`consumer on ${this.queue} was cancelled by the broker`),
    };
    this.transport = transport ? transport(setup) : consumeTransport(ch, setup);
  }

  async start(consumerArgs: Record<string, unknown> = {}): Promise<void> {
    if (this.w.qos) await this.ch.prefetch(this.w.qos, false);
    this.tag = await this.transport.start(consumerArgs);
  }

  /**
   * Sends the acks due and cancels. Bounded by the caller (amqp091.ts): a broker reading slowly may
   * never answer. Acks are never merged to get through faster: the broker sees one per message
   * (or one per -A), as from PerfTest and from the plain transport.
   */
  async stop(): Promise<void> {
    this.transport.flush();
    if (this.tag) await this.ch.cancel(this.tag).catch(() => undefined);
  }

  /** Counts a delivery and its latency, and acks it when one is due (every one, or every N). */
  private readonly onDelivery = (deliveryTag: number, sendTimeMs: number): void => {
    this.rec.consumed++;
    if (this.rec.measuring && !Number.isNaN(sendTimeMs)) this.rec.recordLatency((nowMs() - sendTimeMs) * 1000);
    if (this.w.autoAck) return;
    if (this.every > 1 && ++this.unacked < this.every) return;
    this.unacked = 0;
    this.transport.ack(deliveryTag);
  };
}

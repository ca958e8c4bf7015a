// One PerfTest consumer on its own channel: prefetch, autoAck, ack every N with multiple=true,
// or nack with/without requeue. Records end-to-end latency from the body's send time.
//
// Hot path: the ack (or nack) frames are amqplib's own encoding, patched with the delivery tag,
// and every frame produced while one socket read is processed leaves in one write (wire.ts);
// the broker still sees one basic.ack per message (or per N with multiple=true), as from PerfTest.
// Plain path (wire-check.ts): every delivery reaches onMessage through amqplib's consume callback
// and is acked (nacked) with Channel#ack (nack) on the message itself.
import type { Channel, ConsumeMessage } from 'amqplib';
import type { WorkloadParams } from '../schema/types';
import type { TrialRecorder } from '../metrics/recorder';
import { nowMs } from './body';
import { AckWriter, FrameTap } from './wire';
import { wirePath } from './wire-check';

export class Consumer {
  private unacked = 0;
  private tag?: string;
  private readonly acks?: AckWriter;
  private readonly every: number;
  private readonly plain: boolean;

  constructor(
    private readonly ch: Channel,
    private readonly w: WorkloadParams,
    private readonly queue: string,
    private readonly rec: TrialRecorder,
  ) {
    this.every = w.nack || w.multiAckEvery <= 1 ? 1 : w.multiAckEvery;
    this.plain = wirePath(ch) === 'plain';
    if (!w.autoAck && !this.plain) {
      this.acks = new AckWriter(ch, w.nack
        ? (c, m) => c.nack(m as ConsumeMessage, false, w.requeue)
        : (c, m) => c.ack(m as ConsumeMessage, this.every > 1));
    }
  }

  async start(consumerArgs: Record<string, unknown> = {}): Promise<void> {
    if (this.w.qos) await this.ch.prefetch(this.w.qos, false);
    const ok = await this.ch.consume(this.queue, this.onMessage, { noAck: this.w.autoAck, arguments: consumerArgs });
    this.tag = ok.consumerTag;
    // From here on deliveries are read in place (wire.ts); any already under way reach onMessage.
    if (!this.plain) FrameTap.register(this.ch, { delivery: this.onDelivery });
  }

  /**
   * Sends the acks due and cancels. Bounded by the caller (engine.ts): a broker reading slowly may
   * never answer. Acks are never merged to get through faster: the broker sees one per message
   * (or one per -A), as from PerfTest and from the plain transport.
   */
  async stop(): Promise<void> {
    this.acks?.flush();
    if (this.tag) await this.ch.cancel(this.tag).catch(() => undefined);
  }

  /**
   * amqplib's path: every delivery on the plain path; on the fast path, deliveries before the tap
   * took over. And the broker's cancel (null).
   */
  private readonly onMessage = (msg: ConsumeMessage | null): void => {
    if (msg === null) {
      this.rec.error(`consumer on ${this.queue} was cancelled by the broker`);
      return;
    }
    const body = msg.content;
    const sendTimeMs = body.length >= 12 ? body.readDoubleBE(4) : NaN;
    if (!this.plain) this.onDelivery(msg.fields.deliveryTag, sendTimeMs);
    else if (this.count(sendTimeMs) && !this.w.autoAck) {
      if (this.w.nack) this.ch.nack(msg, false, this.w.requeue);
      else this.ch.ack(msg, this.every > 1);
    }
  };

  private readonly onDelivery = (deliveryTag: number, sendTimeMs: number): void => {
    if (this.count(sendTimeMs) && this.acks) this.acks.add(deliveryTag);
  };

  /** Counts a delivery and its latency; true when it is due an ack (every one, or every N). */
  private count(sendTimeMs: number): boolean {
    this.rec.consumed++;
    if (this.rec.measuring && !Number.isNaN(sendTimeMs)) this.rec.recordLatency((nowMs() - sendTimeMs) * 1000);
    if (this.every > 1 && ++this.unacked < this.every) return false;
    this.unacked = 0;
    return true;
  }
}

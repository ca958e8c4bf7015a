// One PerfTest consumer on its own channel: prefetch, autoAck, ack every N with multiple=true,
// or nack with/without requeue. Records end-to-end latency from the body's send time.
import type { Channel, ConsumeMessage } from 'amqplib';
import type { WorkloadParams } from '../schema/types';
import type { TrialRecorder } from '../metrics/recorder';
import { nowMs, sendTime } from './body';

export class Consumer {
  private unacked = 0;
  private tag?: string;

  constructor(
    private readonly ch: Channel,
    private readonly w: WorkloadParams,
    private readonly queue: string,
    private readonly rec: TrialRecorder,
  ) {}

  async start(consumerArgs: Record<string, unknown> = {}): Promise<void> {
    if (this.w.qos) await this.ch.prefetch(this.w.qos, false);
    const ok = await this.ch.consume(this.queue, this.onMessage, { noAck: this.w.autoAck, arguments: consumerArgs });
    this.tag = ok.consumerTag;
  }

  async stop(): Promise<void> {
    if (this.tag) await this.ch.cancel(this.tag).catch(() => undefined);
  }

  private readonly onMessage = (msg: ConsumeMessage | null): void => {
    if (msg === null) {
      this.rec.error(`consumer on ${this.queue} was cancelled by the broker`);
      return;
    }
    this.rec.consumed++;
    const sent = sendTime(msg.content);
    if (sent === sent) this.rec.recordLatency((nowMs() - sent) * 1000);
    if (this.w.autoAck) return;
    if (this.w.nack) {
      this.ch.nack(msg, false, this.w.requeue);
    } else if (this.w.multiAckEvery > 1) {
      if (++this.unacked >= this.w.multiAckEvery) {
        this.ch.ack(msg, true);
        this.unacked = 0;
      }
    } else {
      this.ch.ack(msg);
    }
  };
}

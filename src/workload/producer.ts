// One PerfTest producer on its own channel: publishes as fast as the confirm window and amqplib's
// back-pressure allow (unlimited mode), or one message per due slot handed out by the rate
// scheduler (fixed-rate mode, timestamped with the *intended* send time so stalls count as
// latency). Confirms are matched in order with one shared callback and a ring of send times:
// no closure, promise or timer per message.
import type { Channel, ConfirmChannel, Options } from 'amqplib';
import type { WorkloadParams } from '../schema/types';
import type { TrialRecorder } from '../metrics/recorder';
import { bodyFactory, nowMs, type BodyFactory } from './body';

/** Yield to the event loop after this many publishes so amqplib flushes to the socket. */
const BATCH = 200;

export class Producer {
  private seq = 0;
  private outstanding = 0;
  private running = false;
  private waiting = false;
  private readonly window: number;
  private readonly times: Float64Array;
  private head = 0;
  private tail = 0;
  private readonly body: BodyFactory;
  private readonly options: Options.Publish;
  private readonly onConfirm?: (err: unknown) => void;
  private readonly limit: number;
  private scheduled = false;
  /** Fixed-rate state, driven by the scheduler: intended time of the next message (epoch ms). */
  nextDue = 0;

  constructor(
    private readonly ch: Channel | ConfirmChannel,
    private readonly w: WorkloadParams,
    private readonly exchange: string,
    private readonly routingKey: string,
    private readonly rec: TrialRecorder,
  ) {
    this.body = bodyFactory(w.size);
    this.options = publishOptions(w);
    this.limit = w.producerMessageLimit > 0 ? w.producerMessageLimit : Infinity;
    this.window = w.confirm ?? 0;
    this.times = new Float64Array(this.window > 0 ? this.window + 1 : 1);
    if (this.window > 0) {
      this.onConfirm = (err) => {
        const sent = this.times[this.head];
        this.head = this.head + 1 === this.times.length ? 0 : this.head + 1;
        this.outstanding--;
        if (err) this.rec.nacked++;
        else {
          this.rec.confirmed++;
          this.rec.recordConfirmLatency((nowMs() - sent) * 1000);
        }
        if (this.waiting && this.running) this.resume();
      };
    }
    ch.on('drain', () => {
      if (this.waiting && this.running) this.resume();
    });
  }

  /** Can a message go out now (confirm window and message limit allow it)? */
  get ready(): boolean {
    return this.running && (this.window === 0 || this.outstanding < this.window) && this.seq < this.limit;
  }

  get done(): boolean {
    return this.seq >= this.limit;
  }

  /** Unlimited mode: publish until stopped. */
  startUnlimited(): void {
    this.running = true;
    this.pump();
  }

  /** Fixed-rate mode: the scheduler calls publishOne when a message is due. */
  startScheduled(firstDue: number): void {
    this.running = true;
    this.scheduled = true;
    this.nextDue = firstDue;
  }

  stop(): void {
    this.running = false;
  }

  /** Publishes one message stamped with `sendTime`; false if amqplib's buffer is full. */
  publishOne(sendTime: number): boolean {
    const seq = this.seq++;
    if (this.window > 0) {
      this.times[this.tail] = nowMs();
      this.tail = this.tail + 1 === this.times.length ? 0 : this.tail + 1;
      this.outstanding++;
    }
    this.rec.published++;
    return this.onConfirm
      ? (this.ch as ConfirmChannel).publish(this.exchange, this.routingKey, this.body(seq, sendTime), this.options, this.onConfirm)
      : this.ch.publish(this.exchange, this.routingKey, this.body(seq, sendTime), this.options);
  }

  private resume(): void {
    this.waiting = false;
    if (!this.scheduled) setImmediate(this.pump);
  }

  private readonly pump = (): void => {
    for (let i = 0; i < BATCH; i++) {
      if (!this.ready) {
        this.waiting = this.running && !this.done;
        return;
      }
      if (!this.publishOne(nowMs())) {
        this.waiting = true;
        return;
      }
    }
    setImmediate(this.pump);
  };
}

export function publishOptions(w: WorkloadParams): Options.Publish {
  const o: Options.Publish = { persistent: w.persistent, mandatory: w.mandatory };
  const headers: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(w.messageProperties)) {
    if (k === 'expiration') o.expiration = String(v);
    else if (k === 'priority') o.priority = Number(v);
    else if (k === 'contentType' || k === 'content_type') o.contentType = String(v);
    else if (k === 'type') o.type = String(v);
    else headers[k] = v;
  }
  if (Object.keys(headers).length) o.headers = headers;
  return o;
}

// Two guards around rabbitmq-stream-js-client 1.0.0, applied once when the stream driver loads:
// - RabbitMQ before 3.11 does not know the command-version exchange the client sends after
//   opening a connection: the broker answers with a Close, and the client, which has no handler
//   for a broker-initiated Close, never finishes connecting. The exchange is skipped for those
//   brokers (streams themselves exist since 3.9: publish v1, subscribe, credit and confirms).
// - A frame the client cannot decode throws inside its socket's data handler, which would end
//   this process; it ends that connection instead (the trial fails with the reason, the run goes on).
// Each guard checks that the method it wraps exists, so a client release that changes them runs
// unguarded rather than broken (the stream scenarios' tests on 3.10.8 then say so).
import { Connection } from 'rabbitmq-stream-js-client/dist/connection';

interface Internals {
  peerProperties?: { version?: string };
  socket?: { destroy(err?: Error): void };
  exchangeCommandVersions?: () => Promise<unknown>;
  received?: (data: Buffer) => void;
}

/** "3.10.8" → true when below 3.11 (unknown versions are taken as new). */
export function beforeCommandVersions(version: string | undefined): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  return !!m && (Number(m[1]) < 3 || (Number(m[1]) === 3 && Number(m[2]) < 11));
}

let applied = false;

export function guardStreamClient(): void {
  if (applied) return;
  applied = true;
  const proto = Connection.prototype as unknown as Internals;
  const exchange = proto.exchangeCommandVersions;
  if (typeof exchange === 'function') {
    proto.exchangeCommandVersions = function (this: Internals) {
      return beforeCommandVersions(this.peerProperties?.version) ? Promise.resolve(true) : exchange.call(this);
    };
  }
  const received = proto.received;
  if (typeof received === 'function') {
    proto.received = function (this: Internals, data: Buffer) {
      try {
        received.call(this, data);
      } catch (e) {
        this.socket?.destroy(new Error(`the stream client could not read the broker's frame: ${(e as Error).message}`));
      }
    };
  }
}

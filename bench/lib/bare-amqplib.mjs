// A bare amqplib loop (one confirm-window publisher, one acking consumer, nothing else), the
// floor our generator is compared with: what amqplib itself costs for PerfTest's one_fast.
//   node bare-amqplib.mjs AMQP_URL WARMUP_S SECONDS SIZE WINDOW
// Prints {"event":"window",...} markers and a result line like bench/lib/gate-child.ts.
import { createRequire } from 'node:module';
const require = createRequire(new URL('../../package.json', import.meta.url));
const amqp = require('amqplib');
const [url, warm, secs, size, window] = process.argv.slice(2).map((x, i) => (i ? Number(x) : x));
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
out({ event: 'ready' }); // create stdout outside the measured window
const pc = await amqp.connect(url, { noDelay: true });
const cc = await amqp.connect(url, { noDelay: true });
const setup = await pc.createChannel();
await setup.assertQueue('bare', { durable: true, autoDelete: false, arguments: { 'x-max-length': 5_000_000 } });
const pub = await pc.createConfirmChannel();
const sub = await cc.createChannel();
let published = 0,
  consumed = 0,
  outstanding = 0,
  waiting = false;
const body = Buffer.alloc(size, 0x2e);
await sub.consume('bare', (m) => {
  consumed++;
  sub.ack(m);
});
const onConfirm = () => {
  outstanding--;
  if (waiting) {
    waiting = false;
    setImmediate(pump);
  }
};
function pump() {
  for (let i = 0; i < 200; i++) {
    if (outstanding >= window) {
      waiting = true;
      return;
    }
    outstanding++;
    published++;
    body.writeDoubleBE(performance.now(), 4);
    if (!pub.publish('', 'bare', body, { persistent: true }, onConfirm)) {
      waiting = true;
      pub.once('drain', () => {
        waiting = false;
        pump();
      });
      return;
    }
  }
  setImmediate(pump);
}
pump();
await new Promise((r) => setTimeout(r, warm * 1000));
const p0 = published,
  c0 = consumed;
out({ event: 'window', phase: 'start' });
await new Promise((r) => setTimeout(r, secs * 1000));
out({ event: 'window', phase: 'end' });
out({ event: 'result', valid: true, metrics: { published_rate: (published - p0) / secs, consumed_rate: (consumed - c0) / secs }, generator: {}, rssBytes: process.memoryUsage.rss() });
process.exit(0);

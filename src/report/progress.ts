// The CLI's progress on stderr while a run goes: a live bar with ETA on a terminal (coloured unless
// colour is off), one plain line per trial otherwise; each trial's headline figures or why it was
// invalid.
import type { TrialResult } from '../schema/types';
import type { Ui } from '../schema/ui';
import { metricDef } from '../metrics/definitions';
import { num } from './format';
import { colorAllowed, paint } from './terminal';

const clock = (s: number) => {
  const t = Math.max(0, Math.round(s));
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, '0')}`;
};

function trialFigures(t: TrialResult): string {
  if (!t.valid) return `INVALID: ${t.invalidReason ?? t.error ?? 'unknown reason'}`;
  const m = t.metrics;
  const main = ['published_rate', 'consumed_rate', 'latency_p99_ms'].filter((k) => k in m);
  // Churn, import and phased scenarios report other metrics: show their first few.
  return (main.length ? main : Object.keys(m).slice(0, 3)).map((k) => `${metricDef(k).label} ${num(m[k], metricDef(k).unit)}`).join(', ');
}

/** Progress on stderr: a live bar with ETA on a terminal, one plain line per trial otherwise. */
export function terminalUi(labels: Record<string, string>): Ui & { stop(): void } {
  const out = process.stderr;
  const tty = Boolean(out.isTTY);
  const c = paint(colorAllowed(out));
  const started = Date.now();
  let bar: { done: number; total: number; eta: number; at: number } | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const clear = () => (tty && bar ? '\r\x1b[K' : '');
  const drawBar = () => {
    if (!tty || !bar) return;
    const width = 28;
    const filled = Math.round((bar.done / bar.total) * width);
    const left = Math.max(0, bar.eta - (Date.now() - bar.at) / 1000);
    out.write(`\r\x1b[K${c('36', '█'.repeat(filled))}${c('2', '░'.repeat(width - filled))} ${bar.done}/${bar.total} trials · ${clock((Date.now() - started) / 1000)} elapsed · ~${clock(left)} left`);
  };
  const line = (s: string) => {
    out.write(`${clear()}${s}\n`);
    drawBar();
  };
  const stop = () => {
    if (ticker) clearInterval(ticker);
    ticker = undefined;
    if (tty && bar) out.write('\r\x1b[K');
    bar = undefined;
  };
  return {
    stop,
    info: (m) => {
      line(m);
      // The pipeline announces the plan ("Running N trials …, about S s"): show the bar from trial one.
      const plan = /^Running (\d+) trials.*about (\d+) s/.exec(m);
      if (tty && plan) {
        bar = { done: 0, total: Number(plan[1]), eta: Number(plan[2]), at: Date.now() };
        ticker ??= setInterval(drawBar, 1000).unref();
        drawBar();
      }
    },
    warn: (m) => line(c('33', `warning: ${m}`)),
    group: async (name, fn) => {
      line(c('1', `${name}…`));
      return fn();
    },
    trialDone: (done, total, t, eta) => {
      const who = `${t.scenario} #${t.trial + 1} on ${labels[t.target] ?? t.target}`;
      if (!tty) {
        out.write(`[${done}/${total}] ${who}: ${trialFigures(t)} (~${Math.round(eta)} s left)\n`);
        return;
      }
      bar = { done, total, eta, at: Date.now() };
      ticker ??= setInterval(drawBar, 1000).unref();
      line(`${t.valid ? c('32', '✓') : c('31', '✗')} ${who}: ${t.valid ? trialFigures(t) : c('33', trialFigures(t))}`);
      if (done === total) stop();
    },
  };
}

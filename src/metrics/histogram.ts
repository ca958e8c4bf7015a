// HdrHistogram helpers: one construction for every latency histogram (µs, 3 significant
// digits, auto-resizing), percentile extraction in ms, and compressed encoding for reports so
// trials can be merged exactly later instead of averaging percentiles.
import * as hdr from 'hdr-histogram-js';
import { LATENCY_PERCENTILES } from './definitions';

export type Histogram = hdr.Histogram;

export function newHistogram(): Histogram {
  return hdr.build({
    bitBucketSize: 32,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 2 ** 31 - 1,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

/** `${prefix}_p50_ms` … `${prefix}_max_ms` from a histogram of µs; nothing when it is empty. */
export function percentileMetrics(prefix: string, h: Histogram): Record<string, number> {
  const out: Record<string, number> = {};
  if (h.totalCount === 0) return out;
  for (const [name, p] of LATENCY_PERCENTILES) {
    // Percentiles are reported as their bucket's highest equivalent value; so is the max here
    // (h.maxValue is exact and could fall below a p99 in the same bucket).
    const us = h.getValueAtPercentile(p);
    out[`${prefix}_${name}_ms`] = Math.round(us) / 1000;
  }
  return out;
}

export function encode(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

export function decode(s: string): Histogram {
  return hdr.decodeFromCompressedBase64(s, 32, false);
}

/** Exact merge of encoded histograms (HdrHistogram add, not an average of percentiles). */
export function mergeEncoded(encoded: string[]): Histogram {
  const total = newHistogram();
  for (const e of encoded) total.add(decode(e));
  return total;
}

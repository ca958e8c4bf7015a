// A series of real local image tags for bisect tests and the bisect bench, made from the offline
// 3.10.8 image with `docker create` + `docker cp` + `docker commit` (no build, no registry): tag k
// onward carries a broker-side regression a user could ship — by default an advanced.config
// lowering the broker's credit flow (credit_flow_default_credit, default {400, 200}), which
// throttles every publisher and queue process, or any one config file (`regression`), such as a
// conf.d line — and a "broken" tag's command exits at once (it cannot boot).
// Each tag is its own image (a label names its position), so the bisect sees distinct IDs. Two
// containers at most are made, one plain and one carrying the regression's file, each committed
// once per tag of its kind: a create, copy and remove per tag would only repeat the same work.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BASE_IMAGE = 'rabbitmq-perf-gate/rabbitmq:3.10.8';

export interface ImageSeries {
  /** tag names in order, [0] the good end. */
  images: string[];
  /** 0-based position of the first regressed tag. */
  culprit: number;
  broken: number[];
  /** The file tags from the culprit on carry. */
  regression: Regression;
  /** Removes every tag made (and its image). */
  remove(): void;
}

/** One config file a regressed tag carries: its path in the image and its text. */
export interface Regression {
  path: string;
  text: string;
}

/** credit_flow_default_credit lowered to {initial, more} in advanced.config. */
export const creditRegression = ([initial, more]: [number, number]): Regression => ({
  path: '/etc/rabbitmq/advanced.config',
  text: `[{rabbit, [{credit_flow_default_credit, {${initial}, ${more}}}]}].\n`,
});

/** One rabbitmq.conf line, added in conf.d after the image's own defaults. */
export const confRegression = (line: string): Regression => ({ path: '/etc/rabbitmq/conf.d/90-regression.conf', text: `${line}\n` });

const docker = (args: string[]) => execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * `count` tags repo:t1…tN; 1-based `regressFrom` onward carry `regression` (by default
 * credit_flow_default_credit `credit`, {10, 5} unless given); the 1-based positions in `broken`
 * run `false` instead of the broker.
 */
export function buildImageSeries(o: { repo: string; count: number; regressFrom: number; broken?: number[]; credit?: [number, number]; regression?: Regression; base?: string }): ImageSeries {
  const regression = o.regression ?? creditRegression(o.credit ?? [10, 5]);
  const dir = mkdtempSync(join(tmpdir(), 'bisect-images-'));
  const file = join(dir, 'regression');
  writeFileSync(file, regression.text);
  const images: string[] = [];
  /** The container each kind of tag is committed from, made on first use. */
  const from: { plain?: string; regressed?: string } = {};
  const containerFor = (regressed: boolean): string => {
    const kind = regressed ? 'regressed' : 'plain';
    const made = from[kind];
    if (made) return made;
    const c = docker(['create', o.base ?? BASE_IMAGE]);
    from[kind] = c;
    if (regressed) docker(['cp', file, `${c}:${regression.path}`]);
    return c;
  };
  try {
    for (let i = 1; i <= o.count; i++) {
      const tag = `${o.repo}:t${i}`;
      const changes = ['--change', `LABEL rabbitmq-perf-gate.bisect-position=${i}`, ...(o.broken?.includes(i) ? ['--change', 'CMD ["false"]'] : [])];
      docker(['commit', ...changes, containerFor(i >= o.regressFrom), tag]);
      images.push(tag);
    }
  } finally {
    for (const c of [from.plain, from.regressed]) if (c) docker(['rm', '-f', c]);
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    images,
    culprit: o.regressFrom - 1,
    regression,
    broken: (o.broken ?? []).map((b) => b - 1),
    remove: () => {
      for (const t of images)
        try {
          docker(['rmi', '-f', t]);
        } catch {
          /* already gone */
        }
    },
  };
}

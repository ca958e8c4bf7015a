// Anchored baselines. `refresh` records the broker its trials ran on (the image ID and registry
// digests the tag named, config files, env, nodes, resources, setup: anchorOf); a later `check`
// without a reference of its own starts that recorded broker again next to its candidate and
// decides by the same-run paired A/B, the stored trials then shown beside it but not deciding
// (anchoredReference). When the recorded broker cannot be started — the baseline records none,
// Docker is not there, the image is gone — the stored comparison decides and the note says which
// happened and why. A tag that names another image than at the refresh is called out: the new
// image is then judged side by side with the old one (movedTagNote).
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { Baseline, BrokerAnchor, DockerTargetSpec, TargetInfo, TargetSpec } from '../schema/types';
import * as cli from './docker-cli';
import { readConfigFiles } from './docker';
import { MASK, SECRET_NAME } from './container-env';
import { materialise } from '../config/target-file';

/** The anchored reference's target id in reports. */
export const ANCHOR_ID = 'baseline-broker';

/** An image ID as docker shows it: 12 hex digits. */
export const short = (id: string) => id.replace(/^sha256:/, '').slice(0, 12);

/** Env as it may be written down: values of secret-looking names as "***". */
export function maskEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, SECRET_NAME.test(k) ? MASK : v]));
}

/** Env to start a recorded broker with: each masked value replaced by a fresh random one. */
export function unmaskEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === MASK ? randomBytes(12).toString('hex') : v]));
}

/** What to record for a refreshed docker target; undefined for a broker attached by URL. */
export async function anchorOf(spec: TargetSpec, info: TargetInfo): Promise<BrokerAnchor | undefined> {
  if (spec.kind !== 'docker' || !info.imageId) return undefined;
  const files = await readConfigFiles(spec.configFiles ?? []);
  return {
    image: spec.image,
    imageId: info.imageId,
    repoDigests: info.repoDigests ?? [],
    nodes: spec.nodes ?? 1,
    env: maskEnv(spec.env ?? {}),
    ...(spec.cpus ? { cpus: spec.cpus } : {}),
    ...(spec.cpuset ? { cpuset: spec.cpuset } : {}),
    ...(spec.memory ? { memory: spec.memory } : {}),
    setup: spec.setup ?? [],
    network: spec.network ?? 'host',
    configFiles: files.map((f) => ({ name: basename(f.path), base64: f.content.toString('base64') })),
    configDigest: info.configDigest,
  };
}

export interface AnchorChoice {
  /** The recorded broker, ready to start; absent when it cannot be started (see note). */
  reference?: DockerTargetSpec;
  /** One sentence for the log and the report: what decides and why. */
  note: string;
  /** The baseline records a broker, but it could not be started (a warning, not just a note). */
  degraded?: boolean;
}

/** Injected for tests; the real ones ask Docker. */
export interface AnchorProbe {
  dockerAvailable(): Promise<void>;
  imageExists(ref: string): Promise<boolean>;
  tryPull(ref: string): Promise<boolean>;
}
const dockerProbe: AnchorProbe = { dockerAvailable: cli.assertDockerAvailable, imageExists: cli.imageExists, tryPull: cli.tryPull };

/** The stored baseline's broker as a same-run reference, or why the stored trials decide instead. */
export async function anchoredReference(stored: Baseline, probe: AnchorProbe = dockerProbe): Promise<AnchorChoice> {
  const a = stored.anchor;
  const fallback = (why: string, degraded = true): AnchorChoice => ({ note: `${why}: compared with the baseline's stored trials`, degraded });
  if (!a) {
    return fallback(
      stored.target.kind === 'url'
        ? 'the stored baseline was measured on a broker attached by URL, which this tool cannot start again'
        : 'the stored baseline records no broker to start again (written by an older version; refresh it to anchor it)',
      false,
    );
  }
  try {
    await probe.dockerAvailable();
  } catch (e) {
    return fallback(`the baseline's broker (${a.image}, image ${short(a.imageId)}) could not be started: ${(e as Error).message}`);
  }
  const ref = await pickImage(a, probe);
  if (!ref) {
    const where = a.repoDigests.length ? `neither its ID nor ${a.repoDigests.join(', ')} can be found or pulled` : 'it is a local image no longer on this runner';
    return fallback(`the baseline's image is gone (${a.image} was ${short(a.imageId)} at the refresh; ${where})`);
  }
  return {
    reference: anchorSpec(a, ref),
    note:
      `the stored baseline's broker (${a.image}, image ${short(a.imageId)}, refreshed ${stored.createdAt.slice(0, 10)}) was started again next to the candidate: ` +
      'a same-run A/B decides; the stored trials are shown beside it, not deciding',
  };
}

/** The exact image of the refresh: a registry digest (pulled if needed), else the local image ID. */
async function pickImage(a: BrokerAnchor, probe: AnchorProbe): Promise<string | undefined> {
  for (const d of a.repoDigests) if (await probe.imageExists(d)) return d;
  if (await probe.imageExists(a.imageId)) return a.imageId;
  for (const d of a.repoDigests) if (await probe.tryPull(d)) return d;
  return undefined;
}

/** A target spec starting the recorded broker from `image`, its config files written to a temp folder. */
function anchorSpec(a: BrokerAnchor, image: string): DockerTargetSpec {
  const configFiles = materialise(a.configFiles.map((f) => ({ path: f.name, content: Buffer.from(f.base64, 'base64') })));
  return {
    id: ANCHOR_ID,
    label: `baseline broker (${a.image} @ ${short(a.imageId)})`,
    kind: 'docker',
    image,
    configFiles,
    nodes: a.nodes,
    env: unmaskEnv(a.env),
    cpus: a.cpus,
    ...(a.cpuset ? { cpuset: a.cpuset } : {}),
    memory: a.memory,
    setup: a.setup,
    network: a.network,
  };
}

/** The candidate runs the baseline's tag, which now names another image: say that this A/B is
 *  the new image against the old one. Undefined when the tag did not move (or is another image). */
export function movedTagNote(a: BrokerAnchor | undefined, candidate: TargetInfo | undefined): string | undefined {
  if (!a || !candidate?.imageId || candidate.image !== a.image || candidate.imageId === a.imageId) return undefined;
  return `${a.image} names another image than at the refresh (${short(a.imageId)} → ${short(candidate.imageId)}): the new image is A/B'd against the old one`;
}

// Anchored baselines, the decisions without Docker: what a refresh records (secrets masked, config
// files by name), which image a check starts (registry digest, else the local ID, else a pull),
// why it falls back to the stored trials, and when a moved tag is called out. The real brokers
// are in test/integration/anchored-baseline.test.ts.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { anchoredReference, anchorOf, ANCHOR_ID, movedTagNote, type AnchorProbe } from '../../src/broker/anchor';
import type { Baseline, BrokerAnchor, DockerTargetSpec, TargetInfo } from '../../src/schema/types';

const info = (over: Partial<TargetInfo> = {}): TargetInfo => ({
  id: 'candidate',
  label: 'c',
  kind: 'docker',
  amqpUrl: 'amqp://x',
  managementUrl: 'http://x',
  rabbitmqVersion: '3.10.8',
  erlangVersion: '25',
  nodes: [],
  image: 'rabbitmq:3.10',
  imageId: 'sha256:aaaaaaaaaaaaaaaa',
  repoDigests: [],
  ...over,
});

function docker(config: string[] = []): DockerTargetSpec {
  return {
    id: 'candidate',
    label: 'c',
    kind: 'docker',
    image: 'rabbitmq:3.10',
    configFiles: config,
    nodes: 1,
    env: { RABBITMQ_DEFAULT_PASS: 'hunter2', RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 2:1' },
    cpus: 1.5,
    setup: ['rabbitmqctl set_policy x ".*" {}'],
    network: 'host',
  };
}

const baseline = (anchor?: BrokerAnchor, kind: 'docker' | 'url' = 'docker'): Baseline => ({
  schemaVersion: 1,
  createdAt: '2026-11-20T10:00:00.000Z',
  fingerprint: {} as Baseline['fingerprint'],
  target: info({ kind }),
  repetitions: 3,
  scenarios: {},
  history: [],
  ...(anchor ? { anchor } : {}),
});

function probe(present: string[], pullable: string[] = [], down = false): AnchorProbe & { pulls: string[] } {
  const pulls: string[] = [];
  return {
    pulls,
    dockerAvailable: async () => {
      if (down) throw new Error('the Docker daemon is not reachable (Cannot connect)');
    },
    imageExists: async (ref) => present.includes(ref),
    tryPull: async (ref) => {
      pulls.push(ref);
      return pullable.includes(ref);
    },
  };
}

describe('anchorOf: what a refresh records', () => {
  it('image ID, digests, nodes, resources, setup and config files by name; secret-looking env masked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchor-'));
    writeFileSync(join(dir, 'rabbitmq.conf'), 'collect_statistics_interval = 10000\n');
    const a = (await anchorOf(docker([join(dir, 'rabbitmq.conf')]), info({ repoDigests: ['rabbitmq@sha256:bbbb'], configDigest: 'sha256:cc' })))!;
    expect(a).toMatchObject({ image: 'rabbitmq:3.10', imageId: 'sha256:aaaaaaaaaaaaaaaa', repoDigests: ['rabbitmq@sha256:bbbb'], nodes: 1, cpus: 1.5, network: 'host', configDigest: 'sha256:cc' });
    expect(a.env).toEqual({ RABBITMQ_DEFAULT_PASS: '***', RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 2:1' });
    expect(a.setup).toEqual(['rabbitmqctl set_policy x ".*" {}']);
    expect(a.configFiles).toEqual([{ name: 'rabbitmq.conf', base64: Buffer.from('collect_statistics_interval = 10000\n').toString('base64') }]);
  });

  it('nothing for a broker attached by URL, or one whose image ID is unknown', async () => {
    expect(await anchorOf({ id: 'c', label: 'c', kind: 'url', amqpUrl: 'amqp://x', managementUrl: 'http://x' }, info())).toBeUndefined();
    expect(await anchorOf(docker(), info({ imageId: undefined }))).toBeUndefined();
  });
});

describe('anchoredReference: which broker a check starts, or why the stored trials decide', () => {
  const anchor = async (over: Partial<BrokerAnchor> = {}) => ({ ...(await anchorOf(docker(), info()))!, ...over });

  it('the local image ID when there is no registry digest; config, env and setup as recorded, secrets fresh', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchor-'));
    writeFileSync(join(dir, 'advanced.config'), '[].\n');
    const a = (await anchorOf(docker([join(dir, 'advanced.config')]), info()))!;
    const c = await anchoredReference(baseline(a), probe(['sha256:aaaaaaaaaaaaaaaa']));
    const r = c.reference!;
    expect(r).toMatchObject({ id: ANCHOR_ID, kind: 'docker', image: 'sha256:aaaaaaaaaaaaaaaa', nodes: 1, cpus: 1.5, setup: a.setup });
    expect(r.label).toBe('baseline broker (rabbitmq:3.10 @ aaaaaaaaaaaa)');
    expect(r.env.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS).toBe('+S 2:1');
    expect(r.env.RABBITMQ_DEFAULT_PASS).toMatch(/^[0-9a-f]{24}$/);
    expect(r.configFiles.map((f) => basename(f))).toEqual(['advanced.config']);
    expect(readFileSync(r.configFiles[0], 'utf8')).toBe('[].\n');
    expect(c.note).toMatch(/stored baseline's broker \(rabbitmq:3\.10, image aaaaaaaaaaaa, refreshed 2026-11-20\) was started again next to the candidate: a same-run A\/B decides/);
  });

  it('a registry digest first (present, else pulled); the floating tag itself is never used', async () => {
    const a = await anchor({ repoDigests: ['rabbitmq@sha256:bbbb'] });
    expect((await anchoredReference(baseline(a), probe(['rabbitmq@sha256:bbbb', 'sha256:aaaaaaaaaaaaaaaa']))).reference!.image).toBe('rabbitmq@sha256:bbbb');
    const p = probe([], ['rabbitmq@sha256:bbbb']);
    expect((await anchoredReference(baseline(a), p)).reference!.image).toBe('rabbitmq@sha256:bbbb');
    expect(p.pulls).toEqual(['rabbitmq@sha256:bbbb']);
    expect((await anchoredReference(baseline(a), probe(['rabbitmq:3.10']))).reference).toBeUndefined();
  });

  it('falls back, saying why: no anchor (old file / URL broker), no Docker, the image gone', async () => {
    const cases: Array<[Baseline, AnchorProbe, RegExp]> = [
      [baseline(), probe([]), /records no broker to start again \(written by an older version; refresh it to anchor it\): compared with the baseline's stored trials/],
      [baseline(undefined, 'url'), probe([]), /measured on a broker attached by URL, which this tool cannot start again/],
      [baseline(await anchor()), probe([], [], true), /could not be started: .*Docker daemon is not reachable/],
      [baseline(await anchor()), probe([]), /image is gone \(rabbitmq:3\.10 was aaaaaaaaaaaa at the refresh; it is a local image no longer on this runner\)/],
      [baseline(await anchor({ repoDigests: ['rabbitmq@sha256:bbbb'] })), probe([]), /neither its ID nor rabbitmq@sha256:bbbb can be found or pulled/],
    ];
    for (const [b, p, why] of cases) {
      const c = await anchoredReference(b, p);
      expect(c.reference).toBeUndefined();
      expect(c.note).toMatch(why);
      // A recorded broker that cannot be started is a warning; a file that records none is a note.
      expect(c.degraded).toBe(b.anchor !== undefined);
    }
  });
});

describe('movedTagNote', () => {
  it('only when the candidate runs the same tag and it now names another image', async () => {
    const a = (await anchorOf(docker(), info()))!;
    expect(movedTagNote(a, info({ imageId: 'sha256:dddddddddddddddd' }))).toBe(
      "rabbitmq:3.10 names another image than at the refresh (aaaaaaaaaaaa → dddddddddddd): the new image is A/B'd against the old one",
    );
    expect(movedTagNote(a, info())).toBeUndefined();
    expect(movedTagNote(a, info({ image: 'my/rabbitmq:pr-1', imageId: 'sha256:dddd' }))).toBeUndefined();
    expect(movedTagNote(undefined, info())).toBeUndefined();
  });
});

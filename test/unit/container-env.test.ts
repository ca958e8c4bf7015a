// The container environment rule (src/broker/container-env.ts): the image's declarations stay in
// effect, the target file replaces the image's value on purpose, the gate's flags come last; the
// image's enabled_plugins merged with the gate's; the Erlang VM parsed from what a node printed;
// and a declaration the node does not have in effect named (src/broker/effective.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeEnv, describeDeclared, describeEnv, parseEnvConf, stripCookie } from '../../src/broker/container-env';
import { layoutConfig } from '../../src/broker/docker';
import { untar } from '../../src/broker/docker-cli';
import { effectDiff, parseNodeRuntime, undelivered } from '../../src/broker/effective';
import { GateError } from '../../src/schema/errors';
import type { Declared, EffectiveConfig } from '../../src/schema/types';

const COOKIE = 'c0ffee';
const gate = { cookie: COOKIE };
const node = { name: 'n-1@localhost', epmdPort: 4000, distPort: 4001 };

describe('composeEnv: image, then target file, then the gate', () => {
  it("keeps the image's Erlang flags and appends the gate's cookie (server and CLI), +JPperf true last when profiling", () => {
    const e = composeEnv({ env: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 2:1', PATH: '/bin' } }, {}, { ...gate, profile: true });
    expect(e.pass.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS).toBe(`+S 2:1 -setcookie ${COOKIE} +JPperf true`);
    expect(e.pass.RABBITMQ_CTL_ERL_ARGS).toBe(`-setcookie ${COOKIE}`);
    expect(e.pass.PATH).toBeUndefined(); // the image's other ENV is left to Docker
    expect(e.effective.PATH).toBe('/bin');
    const server = e.declared.find((d) => d.name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS')!;
    expect(server).toEqual({
      name: 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS',
      parts: [
        { value: '+S 2:1', from: 'image', where: 'ENV' },
        { value: '-setcookie ***', from: 'gate' },
        { value: '+JPperf true', from: 'gate' },
      ],
    });
    expect(describeEnv(server)).toBe('RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS = +S 2:1 (image ENV) -setcookie *** (the gate) +JPperf true (the gate)');
    expect(e.warnings).toEqual([]);
    expect(JSON.stringify(e.declared)).not.toContain(COOKIE);
  });

  it("lets the target file replace the image's value of the same variable, and says so", () => {
    const e = composeEnv(
      { env: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 2:1', RABBITMQ_CTL_ERL_ARGS: '-hidden' } },
      { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 1:1', RABBITMQ_DEFAULT_PASS: 's3cret' },
      gate,
    );
    expect(e.pass.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS).toBe(`+S 1:1 -setcookie ${COOKIE}`);
    expect(e.pass.RABBITMQ_CTL_ERL_ARGS).toBe(`-hidden -setcookie ${COOKIE}`);
    expect(e.pass.RABBITMQ_DEFAULT_PASS).toBe('s3cret');
    const server = e.declared.find((d) => d.name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS')!;
    expect(describeEnv(server)).toBe('RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS = +S 1:1 (target file) -setcookie *** (the gate); replaces +S 2:1 (image ENV)');
    expect(describeEnv(e.declared.find((d) => d.name === 'RABBITMQ_DEFAULT_PASS')!)).toBe('RABBITMQ_DEFAULT_PASS = *** (target file)');
    // An empty value in the target file is on purpose too: none of the image's flags.
    expect(composeEnv({ env: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 2:1' } }, { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '' }, gate).pass.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS).toBe(
      `-setcookie ${COOKIE}`,
    );
  });

  it("drops any other -setcookie (the nodes and rabbitmqctl must share the gate's) with a warning", () => {
    expect(stripCookie('+S 1:1 -setcookie abc +A 8')).toEqual({ rest: '+S 1:1 +A 8', dropped: true });
    expect(stripCookie('+S 1:1')).toEqual({ rest: '+S 1:1', dropped: false });
    const e = composeEnv({ env: { RABBITMQ_CTL_ERL_ARGS: '-setcookie theirs' } }, {}, gate);
    expect(e.pass.RABBITMQ_CTL_ERL_ARGS).toBe(`-setcookie ${COOKIE}`);
    expect(e.warnings).toEqual(["RABBITMQ_CTL_ERL_ARGS: the image's -setcookie is dropped: the gate sets its own cookie, which every node and rabbitmqctl must share"]);
  });

  it('assigns node names and ports itself (host networking), warning when the image or target set them', () => {
    const e = composeEnv({ env: { RABBITMQ_NODENAME: 'rabbit@img' } }, { RABBITMQ_DIST_PORT: '25672' }, { ...gate, node });
    expect(e.pass).toMatchObject({ RABBITMQ_NODENAME: 'n-1@localhost', ERL_EPMD_PORT: '4000', RABBITMQ_DIST_PORT: '4001' });
    expect(e.warnings).toEqual([
      "RABBITMQ_NODENAME=rabbit@img from the image is replaced by the gate's n-1@localhost: the gate names the nodes and assigns their ports",
      "RABBITMQ_DIST_PORT=25672 from the target file is replaced by the gate's 4001: the gate names the nodes and assigns their ports",
    ]);
    expect(describeEnv(e.declared.find((d) => d.name === 'RABBITMQ_NODENAME')!)).toBe('RABBITMQ_NODENAME = n-1@localhost (the gate); replaces rabbit@img (image ENV)');
  });

  it("takes the image's rabbitmq-env.conf flags when its ENV has none, and refuses a prefixed one that would override the cookie", () => {
    const conf = parseEnvConf('# comment\nSERVER_ADDITIONAL_ERL_ARGS="+sbwt none +S 1:1"\nNODENAME=rabbit\nCTL_ERL_ARGS=$FOO\n');
    expect(conf).toEqual({ values: { SERVER_ADDITIONAL_ERL_ARGS: '+sbwt none +S 1:1', NODENAME: 'rabbit' }, unevaluated: ['CTL_ERL_ARGS'] });
    const e = composeEnv({ env: {}, envConf: conf.values, envConfUnevaluated: conf.unevaluated }, {}, gate);
    expect(e.pass.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS).toBe(`+sbwt none +S 1:1 -setcookie ${COOKIE}`);
    expect(e.declared.find((d) => d.name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS')!.parts[0]).toEqual({ value: '+sbwt none +S 1:1', from: 'image', where: 'rabbitmq-env.conf' });
    expect(e.warnings).toEqual([expect.stringMatching(/^the image's rabbitmq-env\.conf sets CTL_ERL_ARGS with a shell expansion the gate cannot evaluate/)]);
    expect(() => composeEnv({ env: {}, envConf: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 1:1' } }, {}, gate)).toThrow(GateError);
    expect(() => composeEnv({ env: {}, envConf: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 1:1' } }, {}, gate)).toThrow(/overrides the environment the gate starts the node with/);
  });

  it('points RABBITMQ_ENABLED_PLUGINS_FILE back to /etc/rabbitmq, where the merged list is written', () => {
    const e = composeEnv({ env: { RABBITMQ_ENABLED_PLUGINS_FILE: '/opt/plugins' } }, {}, gate);
    expect(e.pass.RABBITMQ_ENABLED_PLUGINS_FILE).toBe('/etc/rabbitmq/enabled_plugins');
    expect(describeEnv(e.declared.find((d) => d.name === 'RABBITMQ_ENABLED_PLUGINS_FILE')!)).toBe(
      'RABBITMQ_ENABLED_PLUGINS_FILE = /etc/rabbitmq/enabled_plugins (the gate (holds the plugins of /opt/plugins)); replaces /opt/plugins (image ENV)',
    );
  });
});

describe("the image's enabled_plugins and /etc/rabbitmq files", () => {
  it("keeps the image's plugins unless the target file ships its own list, then adds the gate's and the scenarios'", () => {
    const image = { plugins: ['rabbitmq_shovel'], files: ['conf.d/10-defaults.conf', 'enabled_plugins', 'rabbitmq.conf'] };
    const kept = layoutConfig([], ['rabbitmq_stream'], image);
    expect(kept.pluginSources).toEqual([
      { name: 'rabbitmq_shovel', from: 'image' },
      { name: 'rabbitmq_management', from: 'gate' },
      { name: 'rabbitmq_prometheus', from: 'gate' },
      { name: 'rabbitmq_stream', from: 'scenario' },
    ]);
    expect(kept.files.get('enabled_plugins')?.toString()).toBe('[rabbitmq_shovel,rabbitmq_management,rabbitmq_prometheus,rabbitmq_stream].\n');
    const own = layoutConfig(
      [
        { path: 'x/enabled_plugins', content: Buffer.from('[rabbitmq_federation].') },
        { path: 'x/rabbitmq.conf', content: Buffer.from('') },
      ],
      [],
      image,
    );
    expect(own.plugins).toEqual(['rabbitmq_federation', 'rabbitmq_management', 'rabbitmq_prometheus']);
    expect(own.fileSources).toEqual([
      { path: 'conf.d/10-defaults.conf', from: 'image' },
      { path: 'conf.d/90-rabbitmq-perf-gate.conf', from: 'gate' },
      { path: 'enabled_plugins', from: 'gate', replaces: true },
      { path: 'rabbitmq.conf', from: 'target', replaces: true },
    ]);
    const lines = describeDeclared({ env: [], plugins: own.pluginSources, files: own.fileSources });
    expect(lines).toEqual([
      'enabled_plugins: rabbitmq_federation (target file); rabbitmq_management, rabbitmq_prometheus (the gate)',
      "/etc/rabbitmq: conf.d/10-defaults.conf (image), conf.d/90-rabbitmq-perf-gate.conf (the gate), enabled_plugins (the gate, replaces the image's), rabbitmq.conf (target file, replaces the image's)",
    ]);
  });

  it('reads the regular files of the tar stream `docker cp` writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'untar-'));
    try {
      mkdirSync(join(dir, 'rabbitmq', 'conf.d'), { recursive: true });
      writeFileSync(join(dir, 'rabbitmq', 'enabled_plugins'), '[rabbitmq_management].\n');
      const long = `${'a'.repeat(120)}.conf`;
      writeFileSync(join(dir, 'rabbitmq', 'conf.d', long), 'x = 1\n');
      const tar = execFileSync('tar', ['-C', dir, '-cf', '-', 'rabbitmq']);
      const files = untar(tar);
      expect([...files.keys()].sort()).toEqual([`rabbitmq/conf.d/${long}`, 'rabbitmq/enabled_plugins']);
      expect(files.get('rabbitmq/enabled_plugins')?.toString()).toBe('[rabbitmq_management].\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** What NODE_RUNTIME_EXPR printed in a 3.10.8 node started with +S 2:1 +sbwt short and
 *  RABBITMQ_SERVER_START_ARGS=+sbwt very_short (tabs between the command line's arguments). */
const OUTPUT = [
  'vm_memory_high_watermark=0.4',
  'default_pass=<<"guest">>',
  [
    'vm:cmdline=/usr/lib/erlang/erts-13.1.5/bin/beam.smp',
    '-W',
    'w',
    '-MBas',
    'ageffcbf',
    '-P',
    '1048576',
    '-stbt',
    'db',
    '-sbwt',
    'none',
    '-sbwtdcpu',
    'none',
    '-sbwtdio',
    'none',
    '-S',
    '2:1',
    '-sbwt',
    'short',
    '-sbwt',
    'very_short',
    '-B',
    'i',
    '--',
    '-root',
    '/usr/lib/erlang',
    '--',
    '-home',
    '/var/lib/rabbitmq',
    '',
  ].join('\t'),
  'vm:init=root\t/usr/lib/erlang',
  'vm:init=epmd_port\t28225',
  'vm:init=setcookie\tsecret123',
  'vm:init=kernel\tnet_ticktime\t120',
  'vm:init=noshell',
  'vm:info:otp_release="25"',
  'vm:info:schedulers=2',
  'vm:info:schedulers_online=1',
  'vm:info:dirty_cpu_schedulers=2',
  'vm:info:dirty_cpu_schedulers_online=1',
  'vm:info:scheduler_bind_type=thread_no_node_processor_spread',
  'vm:info:thread_pool_size=1',
  'vm:info:process_limit=1048576',
  'vm:alloc:binary_alloc=ageffcbf',
  'vm:plugin=rabbitmq_management',
  'vm:plugin=rabbitmq_prometheus',
  'vm:enabled=rabbitmq_prometheus',
  'vm:enabled=rabbitmq_management',
  'ok',
].join('\n');

describe('the Erlang VM read back', () => {
  const rt = parseNodeRuntime(OUTPUT, 'n-1@localhost');

  it('takes the emulator flags from the command line (the last one wins), the init flags without cookie, ports and paths, and what the VM says', () => {
    expect(rt.env).toEqual({ vm_memory_high_watermark: '0.4', default_pass: '***' });
    expect(rt.vm?.emulatorFlags).toEqual(['+W w', '+MBas ageffcbf', '+P 1048576', '+stbt db', '+sbwt none', '+sbwtdcpu none', '+sbwtdio none', '+S 2:1', '+sbwt short', '+sbwt very_short', '+B i']);
    expect(rt.vm?.flags).toMatchObject({ '+S': '2:1', '+sbwt': 'very_short', '+MBas': 'ageffcbf' });
    expect(rt.vm?.initArgs).toEqual(['-kernel net_ticktime 120', '-noshell']);
    expect(rt.vm?.info).toEqual({
      'OTP release': '25',
      'schedulers online': '1 of 2',
      'scheduler bind type': 'thread_no_node_processor_spread',
      'dirty CPU schedulers online': '1 of 2',
      'busy wait': '+sbwt very_short, +sbwtdcpu none, +sbwtdio none',
      'async threads': '1',
      'process limit': '1048576',
      'binary_alloc strategy': 'ageffcbf',
    });
    expect(rt.activePlugins).toEqual(['rabbitmq_management', 'rabbitmq_prometheus']);
    expect(rt.enabledPlugins).toEqual(['rabbitmq_management', 'rabbitmq_prometheus']);
    expect(JSON.stringify(rt)).not.toContain('secret123');
  });

  const eff = (over: Partial<EffectiveConfig> = {}): EffectiveConfig => ({
    rabbitmqVersion: '3.10.8',
    erlangVersion: '25',
    vhost: [],
    plugins: ['rabbitmq_management', 'rabbitmq_prometheus', 'rabbitmq_shovel'],
    node: rt.env,
    vm: rt.vm,
    activePlugins: rt.activePlugins,
    digest: '',
    ...over,
  });

  it('names a declared flag another one overrode, a plugin that is not running, an init flag the node lacks', () => {
    const declared: Declared = {
      env: [
        {
          name: 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS',
          parts: [
            { value: '+S 2:1 +sbwt short -kernel net_ticktime 120 -kernel net_setuptime 30', from: 'target' },
            { value: '-setcookie ***', from: 'gate' },
          ],
        },
      ],
      plugins: [
        { name: 'rabbitmq_management', from: 'image' },
        { name: 'rabbitmq_shovel', from: 'target' },
      ],
      files: [],
    };
    expect(undelivered(declared, eff())).toEqual([
      'plugin rabbitmq_shovel (target file): in enabled_plugins, but not running in the broker; is it installed in the image (rabbitmq-plugins list)?',
      'emulator flag +sbwt short (target file): the node runs +sbwt very_short',
      'init flag -kernel net_setuptime 30 (target file): the node did not start with it',
    ]);
    expect(undelivered(declared, eff({ vm: undefined, activePlugins: undefined }))).toEqual([]);
  });

  it('lists emulator flags and VM settings among the differences in effect', () => {
    const plain = parseNodeRuntime(OUTPUT.replace('\t-S\t2:1', ''), 'n-2@localhost');
    const a = eff();
    const b = eff({ vm: { ...plain.vm!, info: { ...plain.vm!.info, 'schedulers online': '2 of 2' } } });
    expect(effectDiff(a, b, ['s21', 'plain'])).toEqual(['Erlang VM schedulers online: s21 1 of 2 · plain 2 of 2', 'emulator flag +S: s21 2:1 · plain (unset)']);
  });
});

// Who owns a container (src/broker/cleanup.ts): the labels every container gets (host, pid, the
// pid's start time, the boot id) and the rule the orphan sweep removes by — only an owner on this
// host whose process is gone: no such pid, a zombie, or the pid now another process (another
// start time), or a boot since. Checked against real processes; no container is touched here
// (test/integration/interrupt.test.ts sweeps real ones).
import { describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { labelArgs, OWNER_LABELS, ownerState, selfOwner } from '../../src/broker/cleanup';

const startOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19];
const ownerOf = (pid: number) => ({ host: os.hostname(), pid: String(pid), start: startOf(pid), boot: selfOwner().boot });
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('container owners', () => {
  it('every container is labelled with its run and this process: host, pid, start time, boot id', () => {
    const args = labelArgs('r1');
    const labels = Object.fromEntries(args.filter((_, i) => i % 2 === 1).map((l) => l.split('=') as [string, string]));
    expect(labels).toEqual({
      'rabbitmq-perf-gate': '1',
      'rabbitmq-perf-gate.run': 'r1',
      [OWNER_LABELS.host]: os.hostname(),
      [OWNER_LABELS.pid]: String(process.pid),
      [OWNER_LABELS.start]: startOf(process.pid),
      [OWNER_LABELS.boot]: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    });
    expect(ownerState(ownerOf(process.pid))).toBe('alive');
  });

  it('a running process is alive; once it exited it is gone', async () => {
    const child = spawn('sleep', ['30']);
    const owner = ownerOf(child.pid!);
    expect(ownerState(owner)).toBe('alive');
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    await wait(50);
    expect(ownerState(owner)).toBe('gone');
  });

  it('a zombie (exited, not yet reaped by its parent) is gone', async () => {
    // sh starts a short sleep in the background, then becomes `sleep 5`, which never reaps it.
    const pid = Number(
      execFileSync('sh', ['-c', "sh -c 'sleep 0.1 & echo $!; exec sleep 5 >/dev/null' & sleep 0.05"], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .trim()
        .split('\n')[0],
    );
    const owner = ownerOf(pid);
    await wait(600);
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0]).toBe('Z');
    expect(ownerState(owner)).toBe('gone');
  });

  it('the same pid with another start time (a reused pid) is gone; a boot since is gone', () => {
    expect(ownerState({ ...ownerOf(process.pid), start: String(Number(startOf(process.pid)) - 1) })).toBe('gone');
    expect(ownerState({ ...ownerOf(process.pid), boot: '00000000-0000-0000-0000-000000000000' })).toBe('gone');
  });

  it('another host or no owner labels (an older version): never removable', () => {
    expect(ownerState({ ...ownerOf(process.pid), host: `${os.hostname()}-other`, pid: '999999999' })).toBe('elsewhere');
    expect(ownerState({})).toBe('unknown');
    expect(ownerState({ host: os.hostname() })).toBe('unknown');
    expect(ownerState({ host: os.hostname(), pid: 'x' })).toBe('unknown');
  });
});

/**
 * The node images boot for real: runc runs them as the cluster does (systemd PID 1, tmpfs
 * /run, /run/lock, /tmp, env container_uuid, an empty directory on /var/lib as a fresh
 * claim, the CRI's default capabilities) through test/cluster/images/boot-check.sh.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootCheckScript, buildImage, parseKeyValues, type BuiltImage } from './images-scripts.js';

async function bootCheck(archive: string, args: string[] = []) {
  const { stdout } = await execa(bootCheckScript, [archive, ...args], { timeout: 180_000 });
  return parseKeyValues(stdout);
}

let good: BuiltImage;
let broken: BuiltImage;
let claim: string;

beforeAll(async () => {
  good = await buildImage('good');
  broken = await buildImage('broken');
  claim = await mkdtemp(join(tmpdir(), 'images-boot-claim-'));
});

afterAll(async () => {
  await rm(claim, { recursive: true, force: true });
});

describe('booting the node images with runc', () => {
  it('good: systemd reaches running, no failed unit, machine ID = container_uuid, networkd masked, sshd up', async () => {
    const uuid = randomUUID();
    const r = await bootCheck(good.archive, ['--uuid', uuid, '--var-lib', claim]);
    expect(r.STATE).toBe('running');
    expect(r.FAILED_UNITS).toBe('');
    expect(r.MACHINE_ID).toBe(uuid.replaceAll('-', ''));
    expect(r.PROBE_EXIT).toBe('0');
    expect(r.PROBE_OUTPUT).toBe('systemd: running');
    expect(r.NETWORKD).toBe('masked');
    // FR-011: the address and route the "CNI" put on eth0 before start are still there
    expect(r.ETH0_BEFORE).toMatch(/^10\.254\.\d+\.2\/30 default via 10\.254\.\d+\.1$/);
    expect(r.ETH0).toBe(r.ETH0_BEFORE);
    expect(r.SSH).toBe('active');
    expect(r.SSH_HOST_KEY).toMatch(/^ssh-ed25519 \S+$/);
    // signal 37 (SIGRTMIN+3) shuts systemd down cleanly and quickly
    expect(Number(r.STOP_MS)).toBeLessThan(10_000);
  });

  it('good, booted again on the same claim with another UUID: same SSH host key (in /var/lib), other machine ID', async () => {
    const first = await bootCheck(good.archive, ['--var-lib', claim]);
    const uuid = randomUUID();
    const second = await bootCheck(good.archive, ['--uuid', uuid, '--var-lib', claim]);
    expect(second.STATE).toBe('running');
    expect(second.SSH_HOST_KEY).toBe(first.SSH_HOST_KEY);
    expect(second.MACHINE_ID).toBe(uuid.replaceAll('-', ''));
    expect(second.MACHINE_ID).not.toBe(first.MACHINE_ID);
  });

  it('broken: systemd ends degraded and the readiness probe names broken.service', async () => {
    const r = await bootCheck(broken.archive);
    expect(r.STATE).toBe('degraded');
    expect(r.FAILED_UNITS).toBe('broken.service');
    expect(r.PROBE_EXIT).toBe('1');
    expect(r.PROBE_OUTPUT).toMatch(/^systemd: degraded\\nbroken\.service loaded failed failed /);
  });

  it('leaves no container, cgroup or bundle behind', async () => {
    const { stdout: procs } = await execa('ps', ['-eo', 'args']);
    expect(procs).not.toMatch(/deploy-image-check/);
    const { stdout: cgroups } = await execa('sh', ['-c', 'find /sys/fs/cgroup -maxdepth 6 -name "deploy-image-check*" | head']);
    expect(cgroups).toBe('');
    const { stdout: bundles } = await execa('sh', ['-c', `ls -d "${tmpdir()}"/deploy-image-check.* 2>/dev/null || true`]);
    expect(bundles).toBe('');
    const { stdout: netns } = await execa('ip', ['netns', 'list']);
    expect(netns).not.toMatch(/^dic-/m);
  });
});

/**
 * US2: keep the previous image when a node does not become ready (AS1-AS4, SC-003, SC-004),
 * and parallel rollouts: one node's failure does not stop another's rollout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images } from './harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

describe('US2: keep the previous image when a node does not become ready', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let broken: BuiltImage;
  let changed: BuiltImage;
  let goodPlan: string;
  let brokenPlan: string;
  const before: Record<string, string> = {};

  beforeAll(async () => {
    h = await DeployHarness.create('us2');
    [good, broken, changed] = [await images.good(), await images.broken(), await images.goodWith('us2=changed')];
    goodPlan = await h.writePlan('good', { n1: { image: good }, n2: { image: good } });
    // n1 gets a configuration that does not boot; n2 a good change, in the same apply
    brokenPlan = await h.writePlan('broken', { n1: { image: broken }, n2: { image: changed } });
  });
  afterAll(() => h?.cleanup());

  it('GIVEN a good deploy with state in /var/lib', async () => {
    const r = await h.deploy('apply', goodPlan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    await h.exec('n1', 'echo precious > /var/lib/precious');
    before.machineId = await h.exec('n1', 'cat /etc/machine-id');
    before.hostKey = await h.exec('n1', 'cat /var/lib/ssh/ssh_host_ed25519_key.pub');
    before.image = (await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image;
    expect(before.image).toMatch(/@sha256:/);
  });

  it('AS1: a configuration that does not boot fails the program, the output tells of the rollback, and the Deployment runs the previous image again; the other node still rolls out', async () => {
    const started = Date.now();
    const r = await h.deploy('apply', brokenPlan, ['--target', 'all']);
    const seconds = (Date.now() - started) / 1000;
    expect(r.exitCode, r.stderr).toBe(4);
    const [n1, n2] = r.json.targets[0].rollouts;
    expect(n1).toMatchObject({ node: 'n1', outcome: 'rolled-back', previousImage: before.image });
    expect(n1.failedUnits).toContain('broken.service');
    expect(n2).toMatchObject({ node: 'n2', outcome: 'ready' });
    // fail fast: far less than the 120 s rollout timeout
    expect(seconds).toBeLessThan(100);
    const d = await h.getJson(['get', 'deployment', 'n1']);
    expect(d.spec.template.spec.containers[0].image).toBe(before.image);
    const pod = await h.podOf('n1');
    expect(pod.spec.containers[0].image).toBe(before.image);
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
  });

  it('AS4 / SC-004: after the rollout and the rollback, the node has the same /var/lib, machine ID and sshd host keys', async () => {
    expect(await h.exec('n1', 'cat /var/lib/precious')).toBe('precious');
    expect(await h.exec('n1', 'cat /etc/machine-id')).toBe(before.machineId);
    expect(await h.exec('n1', 'cat /var/lib/ssh/ssh_host_ed25519_key.pub')).toBe(before.hostKey);
  });

  it('edge: after a rollback the state holds the failed image and the cluster runs the previous one; the next plan says so', async () => {
    const r = await h.deploy('plan', brokenPlan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    const n1 = r.json.targets[0].nodes.find((n: any) => n.node === 'n1');
    expect(n1.retryAfterRollback).toBe(true);
    expect(n1.words).toContain('try the rollout again');
    // said once: the rollback's own writes are deploy's, never a hand edit (issue 45)
    expect(n1.handEdits, JSON.stringify(n1.handEdits)).toBeUndefined();
    expect(n1.words).not.toContain('hand edit');
    expect(n1.words).toContain('replace its pod');
    const n2 = r.json.targets[0].nodes.find((n: any) => n.node === 'n2');
    expect(n2.words).toBe('no change');
  });

  it('AS3: applying again with the same configuration tries the rollout again (and the text output tells of the rollback)', async () => {
    const r = await h.deploy('apply', brokenPlan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stdout).toMatch(/n1: .*try the rollout again/);
    expect(r.stdout).toMatch(/n1: rolled back to sha256:[0-9a-f]{12} because .*broken\.service/s);
    expect(r.stdout).toContain('failed units: broken.service');
    expect(r.stdout).not.toContain('n2: ready');
    expect((await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image).toBe(before.image);
  });
});

describe('US2 AS2 (and edge: degraded is not ready): a first deploy that does not become ready', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('us2-first')));
  afterAll(() => h?.cleanup());

  it('fails and says there is no previous image to set back', async () => {
    const plan = await h.writePlan('broken', { first: { image: await images.broken() } });
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(5);
    const [rep] = r.json.targets[0].rollouts;
    expect(rep).toMatchObject({ node: 'first', outcome: 'failed-no-previous', previousImage: null });
    expect(rep.failedUnits).toContain('broken.service');
    // edge: a unit failed, so systemd is degraded: the pod is not ready, and its events say why
    const pod = await h.podOf('first');
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('False');
    const events = await h.getJson(['get', 'events', '--field-selector', `involvedObject.name=${pod.metadata.name}`]);
    expect(events.items.some((e: any) => e.message.includes('systemd: degraded') && e.message.includes('broken.service'))).toBe(true);
    const again = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
    expect(again.exitCode).toBe(5);
    expect(again.stdout).toContain('there is no previous revision to set back (this apply made the Deployment: a first deploy of the node, or its Deployment made again, as with a claim made again)');
  });
});

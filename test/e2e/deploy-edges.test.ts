/**
 * The specification's edge cases and US3, against the real cluster: missing RuntimeClass,
 * unreachable registry, unpullable image, no volume for the claim, a node removed (its /var/lib
 * goes, said on a line of its own), per-app targets, submissions, and destroy.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, images, ownRegistry } from './harness.js';
import { freePort, type BuiltImage } from '../integration/images-scripts.js';

let good: BuiltImage;
beforeAll(async () => {
  good = await images.good();
});

describe('edge: the cluster has no RuntimeClass of the method', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('no-rc')));
  afterAll(() => h?.cleanup());

  it('the plan fails before the program pushes an image', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    for (const verb of ['plan', 'apply']) {
      const r = await h.deploy(verb, plan, ['--target', 'all', '--runtime-class', 'no-such-class'], {}, { json: false });
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain('The cluster has no RuntimeClass "no-such-class"');
    }
    expect(await h.registryDigest(`${h.env.K8S_REGISTRY}/${h.namespace}/lone:${good.tag}`)).toBeUndefined();
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
  });
});

describe('edge: the registry is not reachable from the deployer', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('no-reg')));
  afterAll(() => h?.cleanup());

  it('the push fails and the program changes nothing in the cluster', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    const r = await h.deploy('apply', plan, ['--target', 'all', '--registry', `127.0.0.1:${await freePort()}`], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain('connection refused');
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
  });
});

describe("edge: one node's push fails (deploy pushes before tofu's apply)", () => {
  let h: DeployHarness;
  let garbage: BuiltImage;
  beforeAll(async () => {
    h = await DeployHarness.create('push-fails');
    // readable, so the check before the apply passes; skopeo cannot read it as an image
    const archive = join(h.dir, 'garbage.tar');
    await writeFile(archive, 'not a docker archive\n');
    garbage = { archive, tag: 'garbage-1', imageId: '', ms: 0 };
  });
  afterAll(() => h?.cleanup());

  it('GIVEN a first apply WHEN one push fails THEN exit 3 naming it, and nothing is in the cluster, not even the namespace', async () => {
    const plan = await h.writePlan('group', { ok: { image: good }, bad: { image: garbage } });
    const r = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain("the image push of node bad failed, so deploy apply of target all stopped before tofu's apply: nothing in the cluster was changed");
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
  });

  it('GIVEN both nodes running WHEN one gets a new image and the other a push that fails THEN exit 3, and the first keeps its image and pod', async () => {
    const up = await h.deploy('apply', await h.writePlan('group', { ok: { image: good }, bad: { image: good } }), ['--target', 'all']);
    expect(up.exitCode, up.stderr).toBe(0);
    const image = (await h.getJson(['get', 'deployment', 'ok'])).spec.template.spec.containers[0].image;
    const pod = (await h.podOf('ok')).metadata.uid;
    const next = await images.goodWith('PUSH_FIRST_E2E=1');
    const r = await h.deploy('apply', await h.writePlan('group-2', { ok: { image: next }, bad: { image: { ...garbage, tag: 'garbage-2' } } }), ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain('the image push of node bad failed');
    expect((await h.getJson(['get', 'deployment', 'ok'])).spec.template.spec.containers[0].image).toBe(image);
    expect((await h.podOf('ok')).metadata.uid).toBe(pod);
    // the state did not take the pushes of a run that applied nothing: the next apply pushes ok again
    const plan = await h.deploy('plan', await h.writePlan('group-3', { ok: { image: next }, bad: { image: good } }), ['--target', 'all']);
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(plan.json.targets[0].nodes.find((n: any) => n.node === 'ok').push).not.toBe('none');
  });
});

describe('edge: the cluster cannot pull the image', () => {
  let h: DeployHarness;
  let port: number;
  let reg: Awaited<ReturnType<typeof ownRegistry>> | undefined;
  beforeAll(async () => {
    h = await DeployHarness.create('no-pull');
    // a second registry the deployer reaches but the cluster's containerd is not configured for
    reg = await ownRegistry(h, `unpullable-${process.pid}`);
    port = reg.port;
  });
  afterAll(async () => {
    await reg?.remove();
    await h?.cleanup();
  });

  it('the pod does not become ready and the program sets the Deployment back, failing fast on the pull error', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    expect((await h.deploy('apply', plan, ['--target', 'all'])).exitCode).toBe(0);
    const previous = (await h.getJson(['get', 'deployment', 'lone'])).spec.template.spec.containers[0].image;
    const started = Date.now();
    const r = await h.deploy('apply', plan, ['--target', 'all', '--registry', `127.0.0.1:${port}`]);
    expect(r.exitCode, r.stderr).toBe(4);
    const [rep] = r.json.targets[0].rollouts;
    expect(rep.outcome).toBe('rolled-back');
    expect(rep.reason).toBe('image-pull');
    expect(JSON.stringify(rep.events) + rep.message).toMatch(/ErrImagePull|ImagePullBackOff|pull/i);
    expect(Date.now() - started).toBeLessThan(100_000); // not the whole 120 s timeout
    expect((await h.getJson(['get', 'deployment', 'lone'])).spec.template.spec.containers[0].image).toBe(previous);
    expect((await h.podOf('lone')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
  });
});

describe('edge: the cluster has no volume for the claim of a node', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('no-vol')));
  afterAll(() => h?.cleanup());

  it('the pod is not scheduled and does not become ready; the program fails fast (a first deploy has nothing to set back)', async () => {
    const plan = await h.writePlan('group', { lone: { image: good } });
    const started = Date.now();
    const r = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', 'no-such-class']);
    expect(r.exitCode, r.stderr).toBe(5);
    const [rep] = r.json.targets[0].rollouts;
    expect(rep.outcome).toBe('failed-no-previous');
    expect(rep.reason).toMatch(/nschedulable|claim/);
    expect(Date.now() - started).toBeLessThan(100_000);
    expect((await h.getJson(['get', 'pvc', 'lone-state'])).status.phase).toBe('Pending');
  });

  it('GIVEN a node deployed before, its claim moved (--allow-volume-replacement) to a StorageClass that nothing provisions THEN its pod is named unschedulable for want of the volume, nothing is set back (the claim made again made its Deployment again: no earlier revision, and any earlier one needs the same claim), exit 5; the cluster runs no pod of it until the class is fixed', async () => {
    const plan = await h.writePlan('group', { moved: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = await h.getJson(['get', 'pvc', 'moved-state']);
    const started = Date.now();
    const r = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', 'no-such-class', '--allow-volume-replacement', 'moved']);
    expect(r.exitCode, r.stderr).toBe(5);
    const [rep] = r.json.targets[0].rollouts;
    expect(rep.node).toBe('moved');
    expect(rep.outcome).toBe('failed-no-previous');
    expect(rep.reason).toBe('unschedulable');
    expect(rep.message).toContain('moved-state');
    expect(rep.message).toContain('no-such-class');
    expect(rep.message).toContain('this apply made the Deployment');
    expect(Date.now() - started).toBeLessThan(150_000);
    // what the cluster runs: the claim made again, Pending; the pod unscheduled, not Ready
    const claim = await h.getJson(['get', 'pvc', 'moved-state']);
    expect(claim.metadata.uid).not.toBe(before.metadata.uid);
    expect(claim.status.phase).toBe('Pending');
    const pod = await h.podOf('moved');
    expect(pod.status.conditions.find((c: any) => c.type === 'PodScheduled')?.status).toBe('False');
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready')?.status ?? 'False').toBe('False');
    const status = await h.deploy('status', plan, ['--target', 'all']);
    expect(status.exitCode, status.stdout).toBe(7);
    // the class fixed (the cluster's default class named, the claim made again once more): Ready
    // (without --storage-class the graph leaves the class to the cluster, and the claim keeps the one it has)
    const fixed = await h.deploy('apply', plan, ['--target', 'all', '--storage-class', 'standard', '--allow-volume-replacement', 'moved']);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect((await h.podOf('moved')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
  });
});

describe('edge: a node is removed from the group', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('removed')));
  afterAll(() => h?.cleanup());

  it('the graph removes its Deployment and its claim', async () => {
    const both = await h.writePlan('both', { keep: { image: good }, gone: { image: good } });
    expect((await h.deploy('apply', both, ['--target', 'all'])).exitCode).toBe(0);
    expect((await h.kubectl(['get', 'pvc', 'gone-state'])).exitCode).toBe(0);
    const one = await h.writePlan('one', { keep: { image: good } });
    const plan = await h.deploy('plan', one, ['--target', 'all']);
    expect(plan.json.targets[0].nodes.find((n: any) => n.node === 'gone')).toMatchObject({ removed: true });
    // its /var/lib goes without any flag, and plan and apply say so on a line of its own
    expect(plan.json.targets[0].claimLosses).toEqual([expect.objectContaining({ node: 'gone', claim: 'gone-state', change: 'delete', cause: 'node-removed', allowed: true })]);
    const line = '  deletes /var/lib of node gone (claim gone-state): the node left the target';
    expect((await h.deploy('plan', one, ['--target', 'all'], {}, { json: false })).stdout.split('\n')).toContain(line);
    const r = await h.deploy('apply', one, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toContain(line);
    expect((await h.kubectl(['get', 'deployment', 'gone'])).exitCode).not.toBe(0);
    expect((await h.kubectl(['get', 'pvc', 'gone-state'])).exitCode).not.toBe(0);
    expect((await h.podOf('keep')).status.phase).toBe('Running');
  });
});

describe('edge: per-app targets', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('apps')));
  afterAll(async () => {
    for (const app of ['web', 'mail']) await h.kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=false', `${h.namespace}-${app}`], { namespace: null });
    await h?.cleanup();
  });

  it('use their own namespaces and never touch each other\'s Deployments', async () => {
    const plan = await h.writePlan('group', { w: { image: good, apps: ['web'] }, m: { image: good, apps: ['mail'] } });
    for (const t of ['web', 'mail']) expect((await h.deploy('apply', plan, ['--target', t])).exitCode).toBe(0);
    const names = async (ns: string) => (await h.getJson(['get', 'deployments'], { namespace: ns })).items.map((d: any) => d.metadata.name);
    expect(await names(`${h.namespace}-web`)).toEqual(['w']);
    expect(await names(`${h.namespace}-mail`)).toEqual(['m']);
    const mailBefore = await h.getJson(['get', 'deployment', 'm'], { namespace: `${h.namespace}-mail` });
    const changed = await images.goodWith('apps=changed');
    const plan2 = await h.writePlan('group2', { w: { image: changed, apps: ['web'] }, m: { image: good, apps: ['mail'] } });
    expect((await h.deploy('apply', plan2, ['--target', 'web'])).exitCode).toBe(0);
    const mailAfter = await h.getJson(['get', 'deployment', 'm'], { namespace: `${h.namespace}-mail` });
    expect(mailAfter.metadata.generation).toBe(mailBefore.metadata.generation);
    expect(mailAfter.metadata.resourceVersion).toBe(mailBefore.metadata.resourceVersion);
  });
});

describe('edge: a submission', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('submission')));
  afterAll(() => h?.cleanup());

  it('drops the nodes it turns off, and an apply with a different submission on the same state fails naming both', async () => {
    const s1 = await h.writePlan('s1', { on: { image: good }, off: { image: good } }, { submission: { id: 'sub-1', turnsOff: ['off'] } });
    const r = await h.deploy('apply', s1, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect((await h.kubectl(['get', 'deployment', 'on'])).exitCode).toBe(0);
    expect((await h.kubectl(['get', 'deployment', 'off'])).exitCode).not.toBe(0);
    const s2 = await h.writePlan('s2', { on: { image: good }, off: { image: good } }, { submission: { id: 'sub-2', turnsOff: [] } });
    const other = await h.deploy('apply', s2, ['--target', 'all'], {}, { json: false });
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain('belongs to submission "sub-1", and this apply is for submission "sub-2"');
    expect((await h.kubectl(['get', 'deployment', 'off'])).exitCode).not.toBe(0);
  });
});

describe('US3: remove the deployment of a group', () => {
  let h: DeployHarness;
  beforeAll(async () => (h = await DeployHarness.create('us3')));
  afterAll(() => h?.cleanup());

  it('destroy removes the namespace with all that is in it, claims included; the images stay in the registry', async () => {
    const plan = await h.writePlan('group', { a: { image: good }, b: { image: good } });
    expect((await h.deploy('apply', plan, ['--target', 'all'])).exitCode).toBe(0);
    const claims = (await h.getJson(['get', 'pvc'])).items.map((c: any) => c.spec.volumeName);
    expect(claims).toHaveLength(2);
    const r = await h.deploy('destroy', plan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`destroyed: namespace ${h.namespace}`);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
    for (const v of claims) expect(await h.volumeGone(v), `volume ${v} still there a minute after destroy`).toBe(true);
    for (const n of ['a', 'b']) expect(await h.registryDigest(`${h.env.K8S_REGISTRY}/${h.namespace}/${n}:${good.tag}`)).toMatch(/^sha256:/);
    // and a second destroy has nothing left to do
    expect((await h.deploy('destroy', plan, ['--target', 'all'])).exitCode).toBe(0);
  });
});

/**
 * SC-001 after drift (issue 18 item 9): a node's Deployment that the cluster lost (deleted by
 * hand here; a cluster made again from empty etcd or a namespace removed outside `deploy` look
 * the same to the plan) is made again by the next apply AND followed by its rollout step: the
 * apply waits for the pod and exits 0 only when it is ready. The plan says so in words. The
 * node keeps its /var/lib and machine ID (the claim and the UUID in state were not touched).
 * And a tag the registry lost (deleted here; wiped or garbage-collected elsewhere): the plan
 * names the node and plans its push again instead of failing at the digest read.
 */
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../src/tools/discover.js';
import type { BuiltImage } from '../integration/images-scripts.js';
import { DeployHarness, images } from './harness.js';

describe('SC-001 after drift: a Deployment deleted behind the graph, a tag gone from the registry', () => {
  let h: DeployHarness;
  let plan = '';
  let machineId = '';
  let good: BuiltImage;
  beforeAll(async () => {
    h = await DeployHarness.create('drift');
    good = await images.good();
    plan = await h.writePlan('group', { web: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    machineId = await h.exec('web', 'cat /etc/machine-id');
    await h.exec('web', 'echo kept > /var/lib/drift-marker');
  });
  afterAll(() => h?.cleanup());

  it('GIVEN the Deployment deleted by hand WHEN planned THEN the plan says it is made again and its pod waited for', async () => {
    await h.kubectlOk(['delete', 'deployment', 'web', '--wait=true']);
    const r = await h.deploy('plan', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    // through the verified no-op check (issue 22): the apply's record no longer holds, and the full plan runs
    expect(r.stderr).toContain('full plan: Deployment/web is gone from the cluster since the apply of');
    expect(r.json.targets[0].verifiedNoop).toBeUndefined();
    const web = r.json.targets[0].nodes.find((n: any) => n.node === 'web');
    expect(web.words).toBe('create its Deployment (it is gone from the cluster); wait for its pod');
    expect(web).toMatchObject({ deployment: 'create', rollout: 'replace', rolloutForDrift: true });
  });

  it('WHEN applied THEN the rollout step runs and waits for the pod: exit 0 with a ready pod, the same machine ID and /var/lib', async () => {
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    const rollouts = r.json.targets[0].rollouts;
    expect(rollouts.map((x: any) => [x.node, x.outcome]), r.stderr).toEqual([['web', 'ready']]);
    const pod = await h.podOf('web');
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    expect(await h.exec('web', 'cat /etc/machine-id')).toBe(machineId);
    expect(await h.exec('web', 'cat /var/lib/drift-marker')).toBe('kept');
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
    // the apply's record answers this plan without a refresh
    expect(again.stderr).toContain('no changes, verified without a refresh');
    expect(again.json.targets[0].verifiedNoop).toBe(true);
  });

  it('GIVEN an annotation added by hand WHEN planned THEN the check sends the plan to tofu naming the hand edit; the apply removes it without touching the pod, and the next plan is verified', async () => {
    await h.kubectlOk(['annotate', 'deployment', 'web', 'edited-by=hand']);
    const r = await h.deploy('plan', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('full plan: hand edits in the cluster (web: metadata.annotations[edited-by] by kubectl-annotate)');
    // the graph does not set that annotation: tofu plans nothing, deploy's apply removes it (issue 34)
    expect(r.json.targets[0].changes, r.stdout).toBe(true);
    expect(r.json.targets[0].verifiedNoop).toBeUndefined();
    const web = r.json.targets[0].nodes.find((n: any) => n.node === 'web');
    expect(web.handEdits).toEqual([expect.objectContaining({ field: 'metadata.annotations[edited-by]', writer: 'kubectl-annotate', action: 'remove' })]);
    const podBefore = (await h.podOf('web')).metadata.uid;
    const a = await h.deploy('apply', plan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(0);
    const d = await h.getJson(['get', 'deployment', 'web']);
    expect(d.metadata.annotations['edited-by']).toBeUndefined();
    // outside the pod template: the pod stays
    expect((await h.podOf('web')).metadata.uid).toBe(podBefore);
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
    expect(again.json.targets[0].verifiedNoop).toBe(true);
  });

  it('GIVEN the tag gone from the registry WHEN planned THEN the plan names the node and pushes it again; the apply pushes it, keeps the pod, and the next plan is a no-op', async () => {
    // this suite's own repository (<registry>/<namespace>/web): nothing else uses it
    const ref = `${h.env.K8S_REGISTRY}/${h.namespace}/web:${good.tag}`;
    const skopeo = requireTool('skopeo', h.env).path;
    const del = await execa(skopeo, ['delete', '--tls-verify=false', `docker://${ref}`], { env: h.env, reject: false, timeout: 60_000 });
    expect(del.exitCode, del.stderr).toBe(0);
    expect(await h.registryDigest(ref)).toBeUndefined();
    const podBefore = (await h.podOf('web')).metadata.uid;

    const p = await h.deploy('plan', plan, ['--target', 'all']);
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.stderr).toContain(`full plan: node web: its tag ${ref} is gone from the registry`);
    expect(p.stderr).toContain(`the registry no longer has the image of node web (${ref}): its push is planned again`);
    const web = p.json.targets[0].nodes.find((n: any) => n.node === 'web');
    expect(web).toMatchObject({ push: 'replace', tagGone: true });
    expect(web.words).toContain(`push ${ref} again (the registry no longer has it)`);

    const a = await h.deploy('apply', plan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(await h.registryDigest(ref)).toMatch(/^sha256:/);
    // the same archive, the same digest: the pod was not replaced
    expect((await h.podOf('web')).metadata.uid).toBe(podBefore);
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.targets[0].changes, again.stdout).toBe(false);
    expect(again.json.targets[0].verifiedNoop).toBe(true);
  });
});

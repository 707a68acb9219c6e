/**
 * FR-003: "the digest that the registry gives for the pushed tag, so that a later change of
 * the tag does not change the pod". A node is deployed; then ANOTHER image (the broken one:
 * followed, it would never become ready) is pushed to its tag behind deploy's back, with
 * skopeo directly. The next plan names the node and both digests (the recorded one, the one
 * the tag points at now) and exits 0 with no changes; the apply changes nothing: the same pod
 * (UID), the same image digest, no restart. The next plan still says it: a moved tag is
 * reported, never followed, until the node gets a new tag.
 */
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../src/tools/discover.js';
import type { BuiltImage } from '../integration/images-scripts.js';
import { DeployHarness, images } from './harness.js';

describe('FR-003: a tag moved in the registry by someone else is reported, never followed', () => {
  let h: DeployHarness;
  let plan = '';
  let ref = '';
  let pushed = '';
  let moved = '';
  let podBefore: any;
  beforeAll(async () => {
    h = await DeployHarness.create('moved-tag');
    const good: BuiltImage = await images.good();
    const broken: BuiltImage = await images.broken();
    plan = await h.writePlan('group', { web: { image: good } });
    const first = await h.deploy('apply', plan, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    ref = `${h.env.K8S_REGISTRY}/${h.namespace}/web:${good.tag}`;
    pushed = (await h.registryDigest(ref))!;
    expect(pushed).toMatch(/^sha256:[0-9a-f]{64}$/);
    podBefore = await h.podOf('web');
    expect(podBefore.spec.containers[0].image).toBe(ref.replace(`:${good.tag}`, `@${pushed}`));

    // behind deploy's back: another image to the same tag (this suite's own repository)
    const skopeo = requireTool('skopeo', h.env).path;
    const copy = await execa(skopeo, ['copy', '--quiet', '--dest-tls-verify=false', `docker-archive:${broken.archive}`, `docker://${ref}`], { env: h.env, reject: false, timeout: 120_000 });
    expect(copy.exitCode, copy.stderr).toBe(0);
    moved = (await h.registryDigest(ref))!;
    expect(moved).toMatch(/^sha256:/);
    expect(moved).not.toBe(pushed);
  });
  afterAll(() => h?.cleanup());

  const expectedWords = () =>
    `its tag ${ref} was moved in the registry (not by deploy): it points at ${moved}; the Deployment keeps ${pushed}, the digest deploy pushed, and nothing follows the tag (FR-003); to run the other image, give the node a new tag`;

  it('WHEN planned THEN the plan names the node and both digests, changes nothing and exits 0', async () => {
    const r = await h.deploy('plan', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    const t = r.json.targets[0];
    expect(t.changes, r.stdout).toBe(false);
    const web = t.nodes.find((n: any) => n.node === 'web');
    expect(web.tagMoved).toEqual({ recorded: pushed, current: moved });
    expect(web.words).toBe(expectedWords());
    expect(web).toMatchObject({ push: 'none', deployment: 'none', rollout: 'none' });
    // answered by the verified no-op check (the apply's record; the tag read in-process)
    expect(t.verifiedNoop, r.stderr).toBe(true);
    // and in the human summary, by the full plan too (DEPLOY_FAST_PLAN=off: tofu and skopeo)
    const human = await h.deploy('plan', plan, ['--target', 'all'], { DEPLOY_FAST_PLAN: 'off' }, { json: false });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stderr).toContain('tofu plan');
    expect(human.stderr).not.toContain('verified without a refresh');
    expect(human.stdout).toContain(`  web: ${expectedWords()}`);
  });

  it('WHEN applied THEN the pod is left alone: the same pod, the same image digest, no restart; the next plan still reports it', async () => {
    const a = await h.deploy('apply', plan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.json.targets[0].rollouts).toEqual([]);
    const pod = await h.podOf('web');
    expect(pod.metadata.uid).toBe(podBefore.metadata.uid);
    expect(pod.spec.containers[0].image).toBe(podBefore.spec.containers[0].image);
    expect(pod.status.containerStatuses[0].imageID).toContain(pushed);
    expect(pod.status.containerStatuses[0].restartCount).toBe(podBefore.status.containerStatuses[0].restartCount);
    const deployment = await h.getJson(['get', 'deployment', 'web']);
    expect(deployment.spec.template.spec.containers[0].image).toContain(`@${pushed}`);
    expect(deployment.metadata.generation).toBe(deployment.status.observedGeneration);
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.targets[0].changes).toBe(false);
    expect(again.json.targets[0].nodes.find((n: any) => n.node === 'web').tagMoved).toEqual({ recorded: pushed, current: moved });
  });
});

/**
 * `deploy status` and `deploy history` against the real cluster, tofu and registry (issue 21
 * items 3-4): a good apply is ok (exit 0); a rollback is marked with the image each side has
 * (exit 7); the next good apply is ok again; a Deployment deleted by hand is marked missing;
 * history shows each version and the node's image change. The last rollout comes from the
 * Deployment's annotation, so a status from another home (a new DEPLOY_STATE_DIR holding only
 * a copy of the state data) says the same.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../integration/images-scripts.js';
import { DeployHarness, images } from './harness.js';

describe('deploy status and deploy history on the real cluster', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let broken: BuiltImage;
  let goodPlan = '';
  let brokenPlan = '';
  let goodImage = '';
  let brokenImage = '';
  const status = (plan: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) => h.deploy('status', plan, args, env);
  const node = (r: { json?: any }, name: string) => r.json.targets[0].nodes.find((n: any) => n.node === name);

  beforeAll(async () => {
    h = await DeployHarness.create('status');
    [good, broken] = [await images.good(), await images.broken()];
    goodPlan = await h.writePlan('good', { web: { image: good }, mail: { image: good } });
    brokenPlan = await h.writePlan('broken', { web: { image: broken }, mail: { image: good } });
  });
  afterAll(() => h?.cleanup());

  it('GIVEN a good apply THEN status exits 0, each node ok on the image its state holds, with its last rollout; a plan after it has no changes', async () => {
    const a = await h.deploy('apply', goodPlan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(0);
    goodImage = (await h.getJson(['get', 'deployment', 'web'])).spec.template.spec.containers[0].image;
    const r = await status(goodPlan);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.json.healthy).toBe(true);
    const web = node(r, 'web');
    expect(web).toMatchObject({ mark: 'ok', state: { image: goodImage, tag: good.tag, rolloutFailed: false }, cluster: { image: goodImage, ready: true, restarts: 0 } });
    expect(web.cluster.runningImage).toContain(goodImage.split('@')[1]);
    expect(web.lastRollout).toMatchObject({ outcome: 'ready', image: goodImage });
    expect(r.json.targets[0]).toMatchObject({ namespace: h.namespace, stateKey: 'e2e-all', lock: { state: 'free' } });
    expect(r.json.targets[0].serial).toBeGreaterThan(0);
    // the annotation the rollout step wrote changes nothing tofu plans
    const p = await h.deploy('plan', goodPlan, ['--target', 'all']);
    expect(p.json.targets[0].changes, p.stdout).toBe(false);
  });

  it('GIVEN a rollback THEN status marks the node as running the previous image, names both digests and the reason, and exits 7; another home says the same', async () => {
    const a = await h.deploy('apply', brokenPlan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(4);
    brokenImage = a.json.targets[0].rollouts.find((x: any) => x.node === 'web').image;
    expect(brokenImage).not.toBe(goodImage);
    const r = await status(brokenPlan);
    expect(r.exitCode, r.stderr + r.stdout).toBe(7);
    expect(r.json.healthy).toBe(false);
    const web = node(r, 'web');
    expect(web).toMatchObject({ mark: 'rolled-back', state: { image: brokenImage, rolloutFailed: true }, cluster: { image: goodImage, ready: true } });
    expect(web.lastRollout).toMatchObject({ outcome: 'rolled-back', image: brokenImage, previousImage: goodImage });
    expect(web.lastRollout.failedUnits).toContain('broken.service');
    expect(node(r, 'mail').mark).toBe('ok');
    const t = await h.deploy('status', brokenPlan, [], {}, { json: false });
    expect(t.exitCode).toBe(7);
    expect(t.stdout).toMatch(/web +ROLLED-BACK +sha256:[0-9a-f]{12} +sha256:[0-9a-f]{12} +yes/);
    expect(t.stdout).toContain(`runs the previous image ${short(goodImage)}, the state holds ${short(brokenImage)}`);
    expect(t.stdout).toContain('broken.service');
    expect(t.stdout).toContain('status: 1 of 2 nodes differ: web (exit 7)');
    // a fresh home: only the state data (as a shared backend would give it), no run report
    const home = join(h.dir, 'other-home');
    await cp(join(h.env.DEPLOY_STATE_DIR!, 'state'), join(home, 'state'), { recursive: true });
    const elsewhere = await status(brokenPlan, [], { DEPLOY_STATE_DIR: home, HOME: home });
    expect(elsewhere.exitCode).toBe(7);
    expect(node(elsewhere, 'web').lastRollout).toMatchObject({ outcome: 'rolled-back', image: brokenImage });
  });

  it('GIVEN the next good apply THEN status exits 0 again', async () => {
    const a = await h.deploy('apply', goodPlan, ['--target', 'all']);
    expect(a.exitCode, a.stderr).toBe(0);
    const r = await status(goodPlan);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.json.targets[0].nodes.map((n: any) => [n.node, n.mark])).toEqual([
      ['mail', 'ok'],
      ['web', 'ok'],
    ]);
  });

  it('GIVEN a Deployment deleted by hand THEN status marks it missing (drift) and exits 7', async () => {
    await h.kubectlOk(['delete', 'deployment', 'mail', '--wait=true']);
    const r = await h.deploy('status', goodPlan, [], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(7);
    expect(r.stdout).toMatch(/mail +MISSING +sha256:[0-9a-f]{12} +gone/);
    expect(r.stdout).toContain('mail: its Deployment is gone from the cluster (drift');
  });

  it('deploy history shows each version with its serial and time, and the image changes of web: good -> broken (rollout failed) -> good', async () => {
    const r = await h.deploy('history', goodPlan, ['all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^\\d+ +\\S+Z +mail: added, image ${short(goodImage)} \\(tag ${good.tag}\\)$`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`web: image ${short(goodImage)} -> ${short(brokenImage)} \\(tag ${good.tag} -> ${broken.tag}\\)`));
    expect(r.stdout).toMatch(new RegExp(`web: image ${short(brokenImage)} -> ${short(goodImage)} \\(tag ${broken.tag} -> ${good.tag}\\)`));
    expect(r.stdout).toContain('web: its rollout failed');
    const j = await h.deploy('history', goodPlan, ['all']);
    const serials = j.json.versions.map((v: any) => v.serial);
    expect(serials).toEqual([...serials].sort((a: number, b: number) => a - b));
    const webChanges = j.json.versions.flatMap((v: any) => v.changes.filter((c: any) => c.node === 'web' && c.change === 'image').map(() => v.serial));
    expect(webChanges).toHaveLength(2);
    expect(j.json.lastImageChange.find((l: any) => l.node === 'web')).toMatchObject({ serial: webChanges[1], image: goodImage });
  });
});

function short(image: string): string {
  return image.split('@')[1]!.slice(0, 'sha256:'.length + 12);
}

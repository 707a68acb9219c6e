/**
 * Issue 31, dependencies between nodes: `after` in the group plan. A chain db <- app <- web:
 * each Deployment changes only once the node before it is Ready on its new image (timestamps
 * from the API), and a broken db is rolled back while app and web are left as they were (same
 * pod, same Deployment generation), the apply naming db; the next plan still has their change.
 * A cycle and an unknown node are refused before anything runs.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type BuiltImage } from '../integration/images-scripts.js';
import { deploymentsDown, downWhile } from '../support/down-sampler.js';
import { DeployHarness, images } from './harness.js';

/** Seconds since the epoch of an API timestamp (whole seconds). */
const at = (t: string) => Date.parse(t) / 1000;

describe('after: a chain db <- app <- web', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let next: BuiltImage;
  let third: BuiltImage;
  let broken: BuiltImage;
  const chain = (db: BuiltImage, rest: BuiltImage) => ({ db: { image: db }, app: { image: rest, after: ['db'] }, web: { image: rest, after: ['app'] } });

  beforeAll(async () => {
    h = await DeployHarness.create('after');
    [good, next, third, broken] = [await images.good(), await images.goodWith('after=2'), await images.goodWith('after=3'), await images.broken()];
    const first = await h.deploy('apply', await h.writePlan('first', chain(good, good)), ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
  });
  afterAll(() => h?.cleanup());

  /** The time the node's current pod became Ready, and the creation time of its current ReplicaSet. */
  async function times(node: string): Promise<{ ready: number; replicaSet: number }> {
    const pod = await h.podOf(node);
    const ready = pod.status.conditions.find((c: any) => c.type === 'Ready');
    expect(ready.status).toBe('True');
    const owner = pod.metadata.ownerReferences.find((o: any) => o.kind === 'ReplicaSet').name;
    const rs = await h.getJson(['get', 'replicaset', owner]);
    return { ready: at(ready.lastTransitionTime), replicaSet: at(rs.metadata.creationTimestamp) };
  }

  it('GIVEN a new image for all three WHEN applied THEN each Deployment changes only after the node before it is Ready, and the plan said so', async () => {
    const plan = await h.writePlan('next', chain(next, next));
    const p = await h.deploy('plan', plan, ['--target', 'all'], {}, { json: false });
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/ {2}app: .*; only once db is ready \(after\)\n/);
    expect(p.stdout).toMatch(/ {2}web: .*; only once app is ready \(after\)\n/);
    const r = await h.deploy('apply', plan, ['--target', 'all']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].rollouts.map((x: any) => [x.node, x.outcome]).sort()).toEqual([['app', 'ready'], ['db', 'ready'], ['web', 'ready']]);
    const [db, app, web] = [await times('db'), await times('app'), await times('web')];
    // the new ReplicaSet is made when the Deployment's template changes
    expect(app.replicaSet).toBeGreaterThanOrEqual(db.ready);
    expect(web.replicaSet).toBeGreaterThanOrEqual(app.ready);
  });

  it('GIVEN db broken WHEN applied THEN db is rolled back (exit 4), app and web are not touched and the apply names db; the next plan still has their change', async () => {
    const before = Object.fromEntries(await Promise.all(['app', 'web'].map(async (n) => [n, { uid: (await h.podOf(n)).metadata.uid, generation: (await h.getJson(['get', 'deployment', n])).metadata.generation }])));
    const plan = await h.writePlan('broken', chain(broken, third));
    const r = await h.deploy('apply', plan, ['--target', 'all'], {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stdout).toMatch(/rolled back to .* because/);
    for (const n of ['app', 'web']) {
      expect(r.stdout).toContain(`/${n}: not changed: it comes after db, whose rollout failed`);
      expect((await h.podOf(n)).metadata.uid).toBe(before[n].uid);
      expect((await h.getJson(['get', 'deployment', n])).metadata.generation).toBe(before[n].generation);
    }
    const again = await h.deploy('plan', plan, ['--target', 'all']);
    expect(again.exitCode, again.stderr).toBe(0);
    const nodes = Object.fromEntries(again.json.targets[0].nodes.map((n: any) => [n.node, n]));
    for (const n of ['app', 'web']) expect(nodes[n].deployment).toBe('update');
  });

  it('GIVEN a cycle or an unknown node THEN the plan is refused (exit 2) naming them, before any cluster read', async () => {
    const cycle = await h.writePlan('cycle', { db: { image: good, after: ['web'] }, app: { image: good, after: ['db'] }, web: { image: good, after: ['app'] } });
    const c = await h.deploy('plan', cycle, ['--target', 'all'], {}, { json: false });
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toContain('cycle: app -> db -> web -> app');
    const unknown = await h.writePlan('unknown', { db: { image: good }, app: { image: good, after: ['dbx'] } });
    const u = await h.deploy('plan', unknown, ['--target', 'all'], {}, { json: false });
    expect(u.exitCode).toBe(2);
    expect(u.stderr).toContain('"dbx" is not a node of group');
  });
});

describe('waves: --max-unavailable 2 over 4 nodes', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let broken: BuiltImage;
  let next: BuiltImage;
  const four = (image: BuiltImage) => ({ w1: { image }, w2: { image }, w3: { image }, w4: { image } });
  const waves = { DEPLOY_MAX_UNAVAILABLE: '2' };

  beforeAll(async () => {
    h = await DeployHarness.create('waves');
    [good, broken, next] = [await images.good(), await images.broken(), await images.goodWith('waves=2')];
    const first = await h.deploy('apply', await h.writePlan('first', four(good)), ['--target', 'all'], waves);
    expect(first.exitCode, first.stderr).toBe(0);
  });
  afterAll(() => h?.cleanup());

  /** How many of the nodes' Deployments have no ready pod (undefined: the read failed). */
  const countDown = async () => {
    const list = await h.kubectl(['get', 'deployments', '-o', 'json']);
    return list.exitCode === 0 ? deploymentsDown(list.stdout) : undefined;
  };

  it('GIVEN a broken image for all 4 WHEN applied THEN at most 2 are ever down, the first wave is rolled back (exit 4), the second is never restarted, and the apply says why', async () => {
    const uids = Object.fromEntries(await Promise.all(['w3', 'w4'].map(async (n) => [n, (await h.podOf(n)).metadata.uid])));
    const plan = await h.writePlan('broken', four(broken));
    const p = await h.deploy('plan', plan, ['--target', 'all'], waves, { json: false });
    expect(p.stdout).toMatch(/ {2}w1: .*; in wave 1 of 2 \(at most 2 nodes down at once\)\n/);
    expect(p.stdout).toMatch(/ {2}w4: .*; in wave 2 of 2 /);
    const { result: r, maxDown, samples } = await downWhile(h.deploy('apply', plan, ['--target', 'all'], waves, { json: false }), countDown);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(samples).toBeGreaterThan(10);
    expect(maxDown, `${samples} samples`).toBeLessThanOrEqual(2);
    expect(maxDown).toBeGreaterThan(0);
    for (const n of ['w1', 'w2']) expect(r.stdout).toMatch(new RegExp(`/${n}: rolled back to `));
    for (const n of ['w3', 'w4']) {
      expect(r.stdout).toMatch(new RegExp(`/${n}: not changed: its wave starts only after the wave of w[12], whose rollout failed`));
      expect((await h.podOf(n)).metadata.uid).toBe(uids[n]);
    }
  });

  it('GIVEN the same run again with a good image THEN it resumes: every node rolled out, wave 2 after wave 1 was Ready', async () => {
    const { result: r, maxDown } = await downWhile(h.deploy('apply', await h.writePlan('next', four(next)), ['--target', 'all'], waves), countDown);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(maxDown).toBeLessThanOrEqual(2);
    expect(r.json.targets[0].rollouts.map((x: any) => x.outcome)).toEqual(['ready', 'ready', 'ready', 'ready']);
  });
});

describe('waves: an apply interrupted between waves', () => {
  let h: DeployHarness;
  const four = (image: BuiltImage) => ({ w1: { image }, w2: { image }, w3: { image }, w4: { image } });
  const waves = { DEPLOY_MAX_UNAVAILABLE: '2' };

  beforeAll(async () => {
    h = await DeployHarness.create('waves-int');
    const first = await h.deploy('apply', await h.writePlan('first', four(await images.good())), ['--target', 'all'], waves);
    expect(first.exitCode, first.stderr).toBe(0);
  });
  afterAll(() => h?.cleanup());

  it('GIVEN a Ctrl-C once the first wave is Ready THEN exit 130, and the next apply finishes the rest without restarting the first wave', async () => {
    const plan = await h.writePlan('next', four(await images.goodWith('waves_int=2')));
    const child = execa(join(repoRoot, 'bin', 'deploy'), ['apply', '--plan', plan, '--target', 'all'], { env: { ...h.env, ...waves }, reject: false, timeout: 600_000 });
    let stderr = '';
    let sent = false;
    child.stderr!.on('data', (d) => {
      stderr += String(d);
      // the plain view's sentence for a node whose new pod is ready
      if (!sent && /\bw1: ready in /.test(stderr) && /\bw2: ready in /.test(stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const r = await child;
    expect(sent, stderr).toBe(true);
    expect(r.exitCode, stderr).toBe(130);
    const firstWave = Object.fromEntries(await Promise.all(['w1', 'w2'].map(async (n) => [n, (await h.podOf(n)).metadata.uid])));
    const again = await h.deploy('apply', plan, ['--target', 'all'], waves);
    expect(again.exitCode, again.stderr).toBe(0);
    for (const n of ['w1', 'w2']) expect((await h.podOf(n)).metadata.uid, `${n} was restarted by the resumed apply`).toBe(firstWave[n]);
    const images4 = await Promise.all(['w1', 'w2', 'w3', 'w4'].map(async (n) => (await h.getJson(['get', 'deployment', n])).spec.template.spec.containers[0].image.split('@')[1]));
    expect(new Set(images4).size, images4.join(' ')).toBe(1);
    const plain = await h.deploy('plan', plan, ['--target', 'all'], waves);
    expect(plain.json.targets[0].changes).toBe(false);
  });
});

/**
 * Issue 47, a soak between waves and a group that goes back together. Four nodes in waves of
 * one (--max-unavailable 1); s2, in wave 2, runs an image whose late-fail.service fails 20 s
 * after its start, so it is Ready first and falls during the soak of 40 s:
 * - --soak 40s: s2 is rolled back with the failed unit named, the waves after it (s3, s4) are
 *   untouched (same pods), exit 4; s1, in wave 1, keeps its new image;
 * - the same with --on-failure group: s1 is set back too, every node on its previous image and
 *   Ready, exit 4;
 * - a Ctrl-C during s1's soak: exit 130, s1 on its new image and Ready (nothing set back), the
 *   later waves untouched;
 * - with --on-failure group and s3 the one that falls (so s2, then s1, go back), a Ctrl-C once
 *   the group's rollback has begun: exit 130, each node's Deployment on the image the report
 *   says it runs (its previous one or this run's), every node without a Ready pod reported.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, type BuiltImage } from '../integration/images-scripts.js';
import { until } from '../support/until.js';
import { DeployHarness, images } from './harness.js';

const NODES = ['s1', 's2', 's3', 's4'] as const;
type NodeName = (typeof NODES)[number];
interface NodeState {
  uid: string;
  generation: number;
  image: string;
}
const SOAK = { DEPLOY_MAX_UNAVAILABLE: '1', DEPLOY_SOAK: '40s' };

describe('--soak and --on-failure group: a node that falls 20 s after its boot, in wave 2 of 4', () => {
  let h: DeployHarness;
  let late: BuiltImage;
  /** s2 on `s2`, the others on `rest`. */
  const four = (rest: BuiltImage, s2: BuiltImage = rest) => ({ s1: { image: rest }, s2: { image: s2 }, s3: { image: rest }, s4: { image: rest } });

  beforeAll(async () => {
    h = await DeployHarness.create('soak');
    late = await images.lateFail();
    const first = await h.deploy('apply', await h.writePlan('first', four(await images.good())), ['--target', 'all'], { DEPLOY_MAX_UNAVAILABLE: '1' });
    expect(first.exitCode, first.stderr).toBe(0);
  });
  afterAll(() => h?.cleanup());

  /** Per node: its pod's uid, its Deployment's generation and image; every pod Ready. */
  async function state(): Promise<Record<NodeName, NodeState>> {
    const out = {} as Record<NodeName, NodeState>;
    for (const n of NODES) {
      const pod = await h.podOf(n);
      expect(pod.status.conditions.find((c: any) => c.type === 'Ready')?.status, `${n} is not Ready`).toBe('True');
      const dep = await h.getJson(['get', 'deployment', n]);
      out[n] = { uid: pod.metadata.uid, generation: dep.metadata.generation, image: dep.spec.template.spec.containers[0].image };
    }
    return out;
  }

  it('GIVEN --soak 40s THEN the plan says it; s2 falls during its soak and is rolled back naming late-fail.service, s3 and s4 are untouched, exit 4', async () => {
    const before = await state();
    const plan = await h.writePlan('soak', four(await images.goodWith('soak=2'), late));
    const p = await h.deploy('plan', plan, ['--target', 'all'], SOAK, { json: false });
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/ {2}s1: .*; in wave 1 of 4 .*; then watched for 40s \(soak: it must stay running\) before the next wave starts\n/);
    expect(p.stdout).toMatch(/ {2}s4: .*; in wave 4 of 4 .*; then watched for 40s \(soak: it must stay running\) before its rollout counts\n/);
    const r = await h.deploy('apply', plan, ['--target', 'all'], SOAK);
    expect(r.exitCode, r.stderr).toBe(4);
    const rollouts = Object.fromEntries(r.json.targets[0].rollouts.map((x: any) => [x.node, x]));
    expect(Object.keys(rollouts).sort()).toEqual(['s1', 's2']);
    expect(rollouts.s1).toMatchObject({ outcome: 'ready', soakSeconds: 40 });
    expect(rollouts.s2).toMatchObject({ outcome: 'rolled-back', reason: 'systemd-degraded', soakSeconds: 40 });
    expect(rollouts.s2.failedUnits).toContain('late-fail.service');
    expect(rollouts.s2.message).toMatch(/ during the 40s soak, \d+s after it was ready$/);
    // the journal of the failed unit, read before the rollback
    expect(rollouts.s2.logTail.join('\n')).toContain('late-fail.service: failing 20 s after the boot, on purpose');
    const after = await state();
    expect(after.s2.image).toBe(before.s2.image);
    expect(after.s1.image).not.toBe(before.s1.image);
    for (const n of ['s3', 's4'] as const) expect(after[n], `${n} was touched`).toEqual(before[n]);
  });

  it('GIVEN the same with --on-failure group THEN s1 is set back too: every node on its previous image and Ready, s3 and s4 untouched, exit 4', async () => {
    const before = await state();
    const plan = await h.writePlan('group', four(await images.goodWith('soak=3'), late));
    const r = await h.deploy('apply', plan, ['--target', 'all'], { ...SOAK, DEPLOY_ON_FAILURE: 'group' });
    expect(r.exitCode, r.stderr).toBe(4);
    const t = r.json.targets[0];
    expect(t.rollouts.map((x: any) => [x.node, x.outcome]).sort()).toEqual([['s1', 'ready'], ['s2', 'rolled-back']]);
    expect(t.groupRollback.map((x: any) => [x.node, x.wave, x.outcome])).toEqual([['s1', 1, 'set-back']]);
    expect(t.groupRollback[0].runs).toBe(before.s1.image);
    const after = await state();
    for (const n of NODES) expect(after[n].image, `${n} is not on its previous image`).toBe(before[n].image);
    for (const n of ['s3', 's4'] as const) expect(after[n], `${n} was touched`).toEqual(before[n]);
    // the text summary lists the node and what it runs now
    const again = await h.deploy('apply', plan, ['--target', 'all'], { ...SOAK, DEPLOY_ON_FAILURE: 'group' }, { json: false });
    expect(again.exitCode, again.stderr).toBe(4);
    expect(again.stdout).toMatch(/\/s1: group rollback \(wave 1\): set-back \(runs sha256:[0-9a-f]{12}\)/);
  });

  it('GIVEN a Ctrl-C during the soak of wave 1 THEN exit 130: s1 on its new image and Ready, nothing set back, the later waves untouched', async () => {
    const before = await state();
    const plan = await h.writePlan('interrupt', four(await images.goodWith('soak=4')));
    const child = execa(join(repoRoot, 'bin', 'deploy'), ['apply', '--plan', plan, '--target', 'all', '--json'], { env: { ...h.env, ...SOAK }, reject: false, timeout: 600_000 });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    let exited = false;
    void child.then(() => (exited = true));
    // s1's soak has begun: its row counts the soak down (the plain view's line, stderr is no
    // terminal), which the step's first progress line of the soak gives once its new pod is Ready
    await until('s1 in its soak (its row: "[all] s1: soaking: ... left")', () => /\[all\] s1: soaking: \S+ left\n/.test(stderr), {
      timeoutMs: 300_000,
      intervalMs: 50,
      seen: () => stderr.slice(-3000),
      failIf: () => (exited ? 'deploy ended before it' : undefined),
    });
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, stderr).toBe(130);
    const doc = JSON.parse(r.stdout);
    const s1 = doc.targets[0].rollouts.find((x: any) => x.node === 's1');
    expect(s1).toMatchObject({ outcome: 'interrupted' });
    expect(s1.message).toMatch(/^interrupted during the 40s soak, \d+s after the pod was ready; nothing was rolled back\. The Deployment is at revision \d+ \(.*\); pod .*: Running, container running, ready\./);
    const after = await state();
    expect(after.s1.image).not.toBe(before.s1.image);
    for (const n of ['s2', 's3', 's4'] as const) expect(after[n], `${n} was touched`).toEqual(before[n]);
  });

  /** A node's Deployment image, and whether it has exactly one live pod, Ready, on that image (no assertion: a node may be on its way). */
  async function live(n: NodeName): Promise<{ image: string; readyOnIt: boolean }> {
    const dep = await h.getJson(['get', 'deployment', n]);
    const image = dep.spec.template.spec.containers[0].image;
    const pods = (await h.getJson(['get', 'pods', '-l', `app.kubernetes.io/name=${n}`])).items.filter((p: any) => !p.metadata.deletionTimestamp);
    const readyOnIt = pods.length === 1 && pods[0].spec.containers[0].image === image && pods[0].status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True';
    return { image, readyOnIt };
  }

  it('GIVEN --on-failure group and a Ctrl-C once the group\'s rollback has begun THEN exit 130: each node on the image the report says (its previous or its new one), none without a Ready pod left unreported', async () => {
    const before = await state();
    const fresh = await images.goodWith('soak=5');
    // s3 falls in its soak: waves 1-2 (s1, s2) succeeded and go back, s2 first; s4 is held back
    const plan = await h.writePlan('group-interrupt', { s1: { image: fresh }, s2: { image: fresh }, s3: { image: late }, s4: { image: fresh } });
    const child = execa(join(repoRoot, 'bin', 'deploy'), ['apply', '--plan', plan, '--target', 'all', '--json'], { env: { ...h.env, ...SOAK, DEPLOY_ON_FAILURE: 'group' }, reject: false, timeout: 600_000 });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    let exited = false;
    void child.then(() => (exited = true));
    // the group's rollback has begun: s2's row says it is on its way back (stderr is no terminal:
    // the plain view's line). Its pod must stop and boot again, seconds: the signal comes first.
    await until('s2 on its way back (the group rollback begun)', () => /\[all\] s2: setting back to sha256:[0-9a-f]{12}: waiting for Ready\n/.test(stderr), {
      timeoutMs: 480_000,
      intervalMs: 50,
      seen: () => stderr.slice(-3000),
      failIf: () => (exited ? 'deploy ended before it' : undefined),
    });
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, stderr).toBe(130);
    const t = JSON.parse(r.stdout).targets[0];
    const rollouts = Object.fromEntries(t.rollouts.map((x: any) => [x.node, x]));
    expect(Object.keys(rollouts).sort()).toEqual(['s1', 's2', 's3']);
    expect([rollouts.s1.outcome, rollouts.s2.outcome, rollouts.s3.outcome]).toEqual(['ready', 'ready', 'rolled-back']);
    const group = Object.fromEntries(t.groupRollback.map((x: any) => [x.node, x]));
    // s2's wave first, interrupted on its way (or, on a very fast cluster, back); s1's wave never begun
    expect(t.groupRollback.map((x: any) => x.node)).toEqual(['s2', 's1']);
    expect(['interrupted', 'set-back'], JSON.stringify(group.s2)).toContain(group.s2.outcome);
    expect(group.s1).toMatchObject({ wave: 1, outcome: 'not-reached', runs: rollouts.s1.image });
    expect(stderr).toMatch(/\[all\] s1: interrupted: not set back \(the interrupt came before its wave\): it runs sha256:[0-9a-f]{12}\n/);
    // every node: the Deployment holds what the report says; one without a Ready pod on it is reported as not back
    for (const n of NODES) {
      const now = await live(n);
      if (n === 's1' || n === 's2') {
        // one write, done or not: the report knows which image (never null), and it is the previous or the new one
        expect(group[n].runs, `${n}: ${JSON.stringify(group[n])}`).not.toBeNull();
        expect([before[n].image, rollouts[n].image], `${n} runs neither its previous nor its new image`).toContain(group[n].runs);
        expect(now.image, `${n}'s Deployment is not on the image the report says`).toBe(group[n].runs);
        if (!now.readyOnIt) expect(group[n].outcome, `${n} has no Ready pod but is reported ${group[n].outcome}`).not.toBe('set-back');
      } else {
        // s3 set back by its own step, s4 never reached: both on their previous image, Ready
        expect(now, `${n}`).toEqual({ image: before[n].image, readyOnIt: true });
      }
    }
    expect(rollouts.s2.previousImage).toBe(before.s2.image);
  });
});

/**
 * planTarget's three paths, without a cluster or tofu: the verified no-op (no tofu at all),
 * the scoped plan (-target of the changed nodes only), the full plan (and its no-op record).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SUBMISSION_OUTPUT } from '../../../../src/contract/graph/graph-outputs.js';
import { ExitCode } from '../../../../src/errors.js';
import { scopedGraphDir } from '../../../../src/graph/scoped-graph.js';
import { planTarget } from '../../../../src/workflow/target/plan-target.js';
import { address, change, fakeParts, fakeRun, fingerprint, model, namesOutput, planResult } from '../target-fixture.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
async function run(mode: 'plan' | 'apply' | 'destroy', env: NodeJS.ProcessEnv = {}) {
  const r = await fakeRun(mode);
  cleanups.push(r.cleanup);
  return { ...r, opts: { ...r.opts, env: { ...r.opts.env, ...env } } };
}

describe('planTarget', () => {
  it('GIVEN the check verifies the target unchanged THEN it answers "no changes" without tofu, with the state\'s node names', async () => {
    const { parts, calls } = fakeParts({ verdict: { kind: 'verified', movedTags: new Map(), outputs: namesOutput(['alpha', 'beta']), sentence: 'no changes, verified without a refresh' } });
    const { session, opts, progress } = await run('plan');
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('verified');
    expect(plan.summary.verifiedNoop).toBe(true);
    expect(plan.summary.nodes.every((n) => n.push === 'none' && n.deployment === 'none')).toBe(true);
    expect(plan.nodeNames).toEqual(['alpha', 'beta']);
    expect(plan.toApply).toBeUndefined();
    // the objects read once, the check asked, and nothing else: no tofu, no record
    expect(calls.map((c) => c.name)).toEqual(['objects.read', 'noop.check']);
    expect(progress).toEqual(['[all] no changes, verified without a refresh']);
  });

  it('GIVEN only node alpha changed in the graph THEN tofu plans alpha alone (-target), says nothing of the targeting, and keeps no record', async () => {
    const targets = [address.deployment('alpha'), address.push('alpha')];
    const { parts, named } = fakeParts({
      verdict: { kind: 'scoped', nodes: ['alpha'], targets, movedTags: new Map(), outputs: namesOutput(['alpha', 'beta', 'gamma', 'delta']), refresh: true, sentence: 'only node alpha changed in the graph: planned alone (-target)', fingerprint },
      plans: [planResult([change(address.push('alpha'), ['delete', 'create'])])],
      events: [{ kind: 'diagnostic', diagnostic: { severity: 'warning', summary: 'Resource targeting is in effect', detail: '', address: undefined, where: undefined } }],
    });
    const { session, opts, progress } = await run('plan');
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('scoped');
    expect(named('tofu.plan')).toHaveLength(1);
    // in a directory of its own, given the part of the graph its targets read (scoped-graph.ts)
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ targets, replace: [], dir: scopedGraphDir(session.graphDir), lockHeld: true });
    expect(existsSync(join(scopedGraphDir(session.graphDir), 'cdk.tf.json'))).toBe(true);
    // alpha's objects differ from the record: its plan reads them (tofu's refresh, the default)
    expect(named('tofu.plan')[0]!.args[0]).not.toHaveProperty('refresh');
    expect(plan.summary.nodes.find((n) => n.node === 'alpha')!.push).toBe('replace');
    expect(plan.summary.verifiedNoop).toBeUndefined();
    // a plan run applies nothing; its names are the state's, as the check read them (no tofu output)
    expect(plan.toApply).toBeUndefined();
    expect(plan.nodeNames).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    expect(named('tofu.output')).toEqual([]);
    expect(named('noop.record')).toEqual([]);
    expect(progress).toContain('[all] only node alpha changed in the graph: planned alone (-target)');
    expect(progress.some((l) => l.includes('Resource targeting'))).toBe(false);
  });

  it("GIVEN only node alpha changed in the graph AND its objects are as recorded THEN its plan skips tofu's refresh", async () => {
    const targets = [address.deployment('alpha'), address.push('alpha')];
    const { parts, named } = fakeParts({
      verdict: { kind: 'scoped', nodes: ['alpha'], targets, movedTags: new Map(), outputs: namesOutput(['alpha', 'beta', 'gamma', 'delta']), refresh: false, sentence: 'only node alpha changed in the graph: planned alone (-target) without a refresh (its objects are as recorded)', fingerprint },
      plans: [planResult([change(address.push('alpha'), ['delete', 'create'])])],
    });
    const { session, opts } = await run('plan');
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('scoped');
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ targets, refresh: false });
  });

  it('GIVEN no record THEN the full plan runs, says why, and a plan without changes records the fingerprint taken before it', async () => {
    const { parts, named } = fakeParts({
      verdict: { kind: 'full', reason: 'no record of a verified plan of this state on this machine yet (this plan makes one)', fingerprint },
      plans: [planResult([])],
      events: [{ kind: 'diagnostic', diagnostic: { severity: 'warning', summary: 'Resource targeting is in effect', detail: '', address: undefined, where: undefined } }],
    });
    const { session, opts, progress } = await run('plan');
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('full');
    expect(progress).toContain('[all] full plan: no record of a verified plan of this state on this machine yet (this plan makes one)');
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ targets: undefined, replace: [] });
    expect(named('noop.record').map((c) => c.args.slice(0, 2))).toEqual([[fingerprint, 'plan']]);
    // no change: the names are the state's (tofu output)
    expect(named('tofu.output')).toHaveLength(1);
    expect(plan.nodeNames).toEqual(model.nodes.map((n) => n.name));
    // a full plan's targeting warning is tofu's to say (it was not asked for)
    expect(progress.some((l) => l.includes('Resource targeting is in effect'))).toBe(true);
  });

  it('GIVEN DEPLOY_FAST_PLAN=off THEN the check is not asked, the full plan runs and no record is kept', async () => {
    const { parts, named } = fakeParts({ plans: [planResult([])] });
    const { session, opts } = await run('plan', { DEPLOY_FAST_PLAN: 'off' });
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('full');
    expect(named('noop.check')).toEqual([]);
    expect(named('noop.record')).toEqual([]);
  });

  it('GIVEN an apply whose plan has changes THEN it hands the saved plan to applyTarget, with the fingerprint taken before it', async () => {
    const { parts, named } = fakeParts({
      verdict: { kind: 'full', reason: 'the state changed (serial 3 -> 4)', fingerprint },
      plans: [planResult([change(address.deployment('beta'), ['update'])])],
    });
    const { session, opts } = await run('apply');
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('full');
    expect(plan.toApply).toMatchObject({ mode: 'apply', planFile: '/graph/tfplan', scoped: undefined, noFastPlan: undefined, fingerprintBefore: fingerprint });
    expect(plan.toApply!.summary.nodes.find((n) => n.node === 'beta')!.deployment).toBe('update');
    // an apply checks the state's submission before it plans (tofu output), and records nothing yet
    expect(named('tofu.output')).toHaveLength(1);
    expect(named('noop.record')).toEqual([]);
  });

  it("GIVEN an apply whose state belongs to another submission THEN it stops before tofu plans (exit 2)", async () => {
    const { parts, named } = fakeParts({ verdict: { kind: 'full', reason: 'r', fingerprint }, outputs: { [SUBMISSION_OUTPUT]: { value: 'other', sensitive: false } } });
    const { session, opts } = await run('apply');
    await expect(planTarget(parts, session, opts)).rejects.toMatchObject({ exitCode: ExitCode.usage, message: expect.stringContaining('belongs to submission "other"') });
    expect(named('tofu.plan')).toEqual([]);
  });

  it('GIVEN a destroy THEN the cluster is not read, the check not asked, and tofu plans -destroy', async () => {
    const { parts, named, calls } = fakeParts({ plans: [planResult([change(address.deployment('alpha'), ['delete'])])] });
    const { session, opts } = await run('destroy');
    const plan = await planTarget(parts, session, opts);
    expect(plan.path).toBe('full');
    expect(calls.map((c) => c.name)).toEqual(['tofu.init', 'tofu.plan']);
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ destroy: true });
    expect(plan.toApply).toMatchObject({ mode: 'destroy', noFastPlan: 'destroy' });
  });
});

describe('planTarget: a /var/lib claim at risk in the cluster (claim-risk.ts)', () => {
  const claimName = 'node-alpha_state_0A1B2C40';
  const claimAddress = `kubernetes_persistent_volume_claim_v1.${claimName}`;
  const graph = { resource: { kubernetes_persistent_volume_claim_v1: { [claimName]: {} } } };
  const deletingClaim = {
    metadata: { name: 'alpha-state', uid: 'u1', deletionTimestamp: '2026-05-01T10:00:00Z', finalizers: ['kubernetes.io/pvc-protection'] },
    spec: { volumeName: 'pv-1' },
    status: { phase: 'Bound' },
  };
  const pv = { metadata: { name: 'pv-1', uid: 'v1' }, spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { namespace: model.namespace, name: 'alpha-state', uid: 'u1' } }, status: { phase: 'Bound' } };
  const seen = (claims: unknown[]) => ({ server: 'https://cluster.test', objects: [], state: undefined, complete: true, claims, volumes: [pv], deployments: { patch: async () => undefined, read: async () => undefined } });
  const verified = { kind: 'verified' as const, movedTags: new Map(), outputs: namesOutput(['alpha']), sentence: 'no changes, verified without a refresh' };
  async function runWith(mode: 'plan' | 'apply', allowed: string[]) {
    const r = await fakeRun(mode, { allowVolumeReplacement: new Set(allowed) }, graph);
    cleanups.push(r.cleanup);
    return r;
  }

  it('GIVEN a claim being deleted and no flag WHEN apply THEN it is refused (exit 2) after the objects are read, before the check, a hand edit undone or tofu', async () => {
    const { parts, calls } = fakeParts({ objects: seen([deletingClaim]), verdict: verified });
    const { session, opts } = await runWith('apply', []);
    await expect(planTarget(parts, session, opts)).rejects.toMatchObject({ exitCode: ExitCode.usage, message: expect.stringContaining('  - node alpha: claim alpha-state is being deleted since 2026-05-01T10:00:00Z') });
    expect(calls.map((c) => c.name)).toEqual(['objects.read']);
  });

  it('GIVEN the flag names the node WHEN apply THEN tofu plans the claim made again (-replace), and the summary says it on the claim\'s line', async () => {
    const requested = { ...change(claimAddress, ['delete', 'create']), actionReason: 'replace_by_request' };
    const { parts, named } = fakeParts({ objects: seen([deletingClaim]), verdict: { kind: 'full', reason: 'claims at risk' }, plans: [planResult([requested])] });
    const { session, opts } = await runWith('apply', ['alpha']);
    const plan = await planTarget(parts, session, opts);
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ replace: [claimAddress] });
    expect(plan.summary.claimLosses).toEqual([expect.objectContaining({ node: 'alpha', cause: 'at-risk', allowed: true, address: claimAddress })]);
    expect(plan.toApply).toBeDefined();
  });

  it('GIVEN no flag WHEN plan THEN the plan names the claim at risk, asks for no -replace, and keeps no no-op record', async () => {
    const { parts, named } = fakeParts({ objects: seen([deletingClaim]), verdict: { kind: 'full', reason: 'claims at risk', fingerprint }, plans: [planResult([])] });
    const { session, opts, progress } = await runWith('plan', []);
    const plan = await planTarget(parts, session, opts);
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ replace: [] });
    expect(plan.summary.claimLosses).toEqual([expect.objectContaining({ node: 'alpha', claim: 'alpha-state', cause: 'at-risk', allowed: false })]);
    expect(named('noop.record')).toEqual([]);
    expect(progress).toContain('[all] not recorded as verified (the next plan is a full one): /var/lib claim at risk (alpha-state: deleting)');
  });

  it('GIVEN the claim is as it should be WHEN apply THEN nothing is refused, and a plan without changes keeps its record', async () => {
    const bound = { ...deletingClaim, metadata: { name: 'alpha-state', uid: 'u1' } };
    const { parts, named } = fakeParts({ objects: seen([bound]), verdict: { kind: 'full', reason: 'no record', fingerprint }, plans: [planResult([])] });
    const { session, opts } = await runWith('plan', []);
    const plan = await planTarget(parts, session, opts);
    expect(plan.summary.claimLosses).toEqual([]);
    expect(named('noop.record')).toHaveLength(1);
  });
});

describe('planTarget: the ownership step (undo-hand-edits.ts)', () => {
  // alpha's Deployment as the graph makes it, and as the cluster lists it after `kubectl set env FOO=bar`
  const manifest = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'alpha', namespace: model.namespace }, spec: { template: { spec: { containers: [{ name: 'node', image: 'x', env: [{ name: 'container', value: 'docker' }] }] } } } };
  const graph = { resource: { kubernetes_manifest: { 'node-alpha_deployment_0A1B2C3E': { manifest } }, null_resource: { 'node-alpha_rollout_0A1B2C3F': {} } } };
  const env = (name: string) => ({ 'f:env': { [`k:{"name":"${name}"}`]: { '.': {}, 'f:name': {}, 'f:value': {} } } });
  const live = {
    ...manifest,
    metadata: {
      ...manifest.metadata,
      resourceVersion: '41',
      managedFields: [
        { manager: 'deploy', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"node"}': { '.': {}, 'f:name': {}, 'f:image': {}, ...env('container') } } } } } } },
        { manager: 'kubectl-set', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"node"}': env('FOO') } } } } } },
      ],
    },
    spec: { template: { spec: { containers: [{ name: 'node', image: 'x', env: [{ name: 'container', value: 'docker' }, { name: 'FOO', value: 'bar' }] }] } } },
  };

  it("GIVEN a hand edit in alpha's Deployment spec WHEN apply THEN the step writes it back before tofu, the fingerprint is taken again, and alpha's rollout step is replaced", async () => {
    const patched: unknown[] = [];
    const objects = { server: 'https://cluster.test', objects: [{ kind: 'Deployment', object: live }], state: undefined, complete: true, claims: [], volumes: [], deployments: { patch: async (...args: unknown[]) => void patched.push(args), read: async () => undefined } };
    const { parts, calls, named } = fakeParts({ objects, verdict: { kind: 'full', reason: 'hand edits in the cluster', fingerprint }, plans: [planResult([])] });
    const r = await fakeRun('apply', {}, graph);
    cleanups.push(r.cleanup);
    await planTarget(parts, r.session, r.opts);
    expect(patched).toEqual([['alpha', [{ op: 'test', path: '/metadata/resourceVersion', value: '41' }, { op: 'remove', path: '/spec/template/spec/containers/0/env/1' }], 'deploy']]);
    expect(calls.map((c) => c.name)).toEqual(['objects.read', 'noop.check', 'noop.fingerprint', 'tofu.init', 'tofu.output', 'tofu.plan', 'noop.record', 'tofu.output']);
    expect(named('tofu.plan')[0]!.args[0]).toMatchObject({ replace: ['null_resource.node-alpha_rollout_0A1B2C3F'] });
    expect(r.progress).toEqual([
      '[all] full plan: hand edits in the cluster',
      '[all] alpha: undid 1 hand edit of its Deployment (spec.template.spec.containers[node].env[FOO] by kubectl-set)',
      `[all] tofu init (graph ${r.session.graphDir})`,
      '[all] tofu plan',
    ]);
  });

  it('GIVEN the fingerprint taken again after the step cannot be taken AND a plan without changes THEN no record, and it says why (seed 562543228 round 131)', async () => {
    const objects = { server: 'https://cluster.test', objects: [{ kind: 'Deployment', object: live }], state: undefined, complete: true, claims: [], volumes: [], deployments: { patch: async () => undefined, read: async () => undefined } };
    const { parts, named } = fakeParts({ objects, verdict: { kind: 'full', reason: 'hand edits in the cluster', fingerprint }, fingerprintFails: 'only the Deployments were read', plans: [planResult([])] });
    const r = await fakeRun('apply', {}, graph);
    cleanups.push(r.cleanup);
    await planTarget(parts, r.session, r.opts);
    expect(named('noop.record')).toEqual([]);
    expect(r.progress.at(-1)).toBe('[all] not recorded as verified (the next plan is a full one): the fingerprint taken again after the ownership step could not be taken (only the Deployments were read)');
  });
});

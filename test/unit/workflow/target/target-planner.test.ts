/**
 * The planner's decisions without any I/O: no temporary directory, no fake tofu, no cluster.
 * The inputs are shaped as a run gives them: the sample group's target `all`, a graph with the
 * addresses CDKTF names, a state as tofu writes it (state-fixture.ts), the claim and volume of a
 * claim being deleted as the API server lists them, hand edits as findHandEdits names them,
 * tofu's planned changes; each step's answer is fed to the next, as planTarget does.
 */
import { describe, expect, it } from 'vitest';
import { SUBMISSION_OUTPUT } from '../../../../src/contract/graph/graph-outputs.js';
import { DeployError, ExitCode } from '../../../../src/errors.js';
import type { HandEdit } from '../../../../src/workflow/drift/hand-edits.js';
import { stateView } from '../../../../src/workflow/drift/cached-target-state.js';
import type { TargetFingerprint } from '../../../../src/workflow/noop/fingerprint.js';
import type { NoopVerdict } from '../../../../src/workflow/noop/verdict.js';
import type { Mode } from '../../../../src/workflow/target/target-types.js';
import {
  afterOwnershipStep,
  decideAfterTofu,
  decideBeforeTofu,
  judgeObjects,
  namesFrom,
  planReads,
  type BeforeTofuInputs,
  type PlanForTofu,
  type SeenObjects,
} from '../../../../src/workflow/target/target-planner.js';
import type { PlanResult } from '../../../../src/tools/tofu/tofu.js';
import { fixtureState } from '../state-fixture.js';
import { address, change, fingerprint, model, namesOutput, planResult } from '../target-fixture.js';

const claimAddress = (node: string) => `kubernetes_persistent_volume_claim_v1.node-${node}_state_0A1B2C40`;
const bare = (addr: string) => addr.slice(addr.indexOf('.') + 1);
const nodes = model.nodes.map((n) => n.name);

/** The target's graph (cdk.tf.json) as the planner reads it: each node's push, rollout step and claim. */
const graph = {
  resource: {
    null_resource: Object.fromEntries(nodes.flatMap((n) => [[bare(address.push(n)), {}], [bare(address.rollout(n)), {}]])),
    kubernetes_persistent_volume_claim_v1: Object.fromEntries(nodes.map((n) => [bare(claimAddress(n)), {}])),
  },
};

// alpha's claim being deleted while its pod still uses it (the pvc-protection finalizer holds it), on a volume that goes with it
const deletingClaim = {
  metadata: { name: 'alpha-state', uid: 'u1', deletionTimestamp: '2026-05-01T10:00:00Z', finalizers: ['kubernetes.io/pvc-protection'] },
  spec: { volumeName: 'pv-1' },
  status: { phase: 'Bound' },
};
const pv = { metadata: { name: 'pv-1', uid: 'v1' }, spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { namespace: model.namespace, name: 'alpha-state', uid: 'u1' } }, status: { phase: 'Bound' } };
const boundClaim = (node: string) => ({ metadata: { name: `${node}-state`, uid: `uid-${node}` }, spec: { volumeName: `pv-${node}` }, status: { phase: 'Bound' } });
const seen = (claims: unknown[], volumes: unknown[] | string = [pv]): SeenObjects => ({ objects: [], state: undefined, claims, volumes });

// hand edits as findHandEdits names them (drift/hand-edits.test.ts): an env var by kubectl set env, a label by kubectl label
const envEdit: HandEdit = { kind: 'Deployment', name: 'alpha', node: 'alpha', field: 'spec.template.spec.containers[node].env[FOO]', writer: 'kubectl-set', action: 'remove', pointer: '/spec/template/spec/containers/0/env/1', inTemplate: true };
const replicasEdit: HandEdit = { kind: 'Deployment', name: 'gamma', node: 'gamma', field: 'spec.replicas', writer: 'kubectl (scale)', action: 'set-back', inTemplate: false };
const labelEdit: HandEdit = { kind: 'Deployment', name: 'beta', node: 'beta', field: 'metadata.labels[team]', writer: 'kubectl-label', action: 'remove', pointer: '/metadata/labels/team', inTemplate: false };
const keptEdit: HandEdit = { kind: 'Deployment', name: 'delta', node: 'delta', field: 'spec.template.metadata.annotations[kubectl.kubernetes.io/restartedAt]', writer: 'kubectl-rollout', action: 'keep', why: 'kubectl rollout restart', inTemplate: true };

const full: NoopVerdict = { kind: 'full', reason: 'no record of a verified plan of this state on this machine yet (this plan makes one)', fingerprint };
// the check's answer over a claim at risk: no fingerprint is taken (noop/verdict.ts)
const fullAtRisk: NoopVerdict = { kind: 'full', reason: '/var/lib claim at risk in the cluster (alpha-state: deleting)' };
const scopedVerdict: NoopVerdict = {
  kind: 'scoped',
  nodes: ['alpha'],
  targets: [address.deployment('alpha'), address.push('alpha')],
  movedTags: new Map([['beta', { recorded: 'sha256:b1', current: 'sha256:b2' }]]),
  outputs: namesOutput(nodes),
  refresh: false,
  sentence: 'only node alpha changed in the graph: planned alone (-target) without a refresh (its objects are as recorded)',
  fingerprint,
};

function before(mode: Mode, over: Partial<BeforeTofuInputs> = {}) {
  return decideBeforeTofu({ mode, model, allowed: new Set(), seen: seen(nodes.map(boundClaim)), edits: [], risks: [], graph, verdict: mode === 'destroy' ? undefined : full, ...over });
}

/** A plan decided before tofu (never the verified path), as planTarget holds it. */
function forTofu(mode: Mode, over: Partial<BeforeTofuInputs> = {}): PlanForTofu {
  const b = before(mode, over);
  if (b.path === 'verified') throw new Error('the test wanted tofu asked');
  return b;
}

function after(b: PlanForTofu, plan: PlanResult, pushedAgain: ReadonlySet<string> = new Set()) {
  return decideAfterTofu({ model, before: b, seen: seen(nodes.map(boundClaim)), plan, pushedAgain, noFastPlan: undefined, graph: {}, manifests: new Map() });
}

describe('planReads', () => {
  it('GIVEN a plan or an apply THEN the objects are read with the tags, for the check to come', () => {
    expect(planReads('plan', model, {})).toEqual({ noFastPlan: undefined, objects: { tags: true } });
    expect(planReads('apply', model, {})).toEqual({ noFastPlan: undefined, objects: { tags: true } });
  });

  it('GIVEN DEPLOY_FAST_PLAN=off THEN the objects are read without the tags, and the check is not asked', () => {
    expect(planReads('plan', model, { DEPLOY_FAST_PLAN: 'off' })).toEqual({ noFastPlan: 'DEPLOY_FAST_PLAN=off', objects: { tags: false } });
  });

  it('GIVEN a destroy THEN nothing of the cluster is read, and no record is kept', () => {
    expect(planReads('destroy', model, {})).toEqual({ noFastPlan: 'destroy', objects: 'a destroy reads nothing of the cluster before its plan' });
  });
});

describe('judgeObjects', () => {
  const judge = (mode: Mode, s: SeenObjects | string, allowed: string[] = []) => judgeObjects({ mode, model, allowed: new Set(allowed), seen: s, manifests: new Map() });

  it('GIVEN the objects could not be read THEN it says so, and finds no edit, no risk and nothing to refuse', () => {
    expect(judge('apply', 'connect ECONNREFUSED 127.0.0.1:6443')).toEqual({
      edits: [],
      risks: [],
      lines: ["hand edits and /var/lib claims not looked at: the cluster's objects could not be read (connect ECONNREFUSED 127.0.0.1:6443)"],
      refusal: undefined,
    });
  });

  it('GIVEN a destroy THEN nothing is judged and nothing said', () => {
    expect(judge('destroy', 'a destroy reads nothing of the cluster before its plan')).toEqual({ edits: [], risks: [], lines: [], refusal: undefined });
  });

  it('GIVEN alpha\'s claim being deleted and no flag WHEN apply THEN the refusal names node, claim and since when (exit 2)', () => {
    const judged = judge('apply', seen([deletingClaim, boundClaim('beta')]));
    expect(judged.risks.map((r) => [r.node, r.claim, r.dangers, r.inCluster])).toEqual([['alpha', 'alpha-state', ['deleting'], true]]);
    expect(judged.refusal).toBeInstanceOf(DeployError);
    expect(judged.refusal).toMatchObject({ exitCode: ExitCode.usage, message: expect.stringContaining('  - node alpha: claim alpha-state is being deleted since 2026-05-01T10:00:00Z') });
    expect(judged.lines).toEqual([]);
  });

  it('GIVEN the same claim WHEN apply --allow-volume-replacement alpha, or plan THEN nothing is refused, and the risk stays known', () => {
    for (const judged of [judge('apply', seen([deletingClaim]), ['alpha']), judge('plan', seen([deletingClaim]))]) {
      expect(judged.refusal).toBeUndefined();
      expect(judged.risks.map((r) => r.node)).toEqual(['alpha']);
    }
  });

  it('GIVEN the volumes could not be listed and a claim at risk THEN it says the fate of its data is not known', () => {
    const judged = judge('plan', seen([deletingClaim], 'persistentvolumes is forbidden'));
    expect(judged.lines).toEqual(['what becomes of the data on the claims at risk is not known: persistentvolumes is forbidden']);
  });

  it('GIVEN the claims were not listed (the full client) THEN it says the claims were not looked at', () => {
    const judged = judge('apply', { objects: [], state: undefined });
    expect(judged).toEqual({ edits: [], risks: [], lines: ['/var/lib claims not looked at: the claims were not read'], refusal: undefined });
  });
});

describe('decideBeforeTofu', () => {
  it('GIVEN the check verified the target THEN no tofu: the line, the state\'s names, a summary without changes', () => {
    const verified: NoopVerdict = { kind: 'verified', movedTags: new Map(), outputs: namesOutput(['alpha', 'beta']), sentence: 'no changes, verified without a refresh' };
    const b = before('plan', { verdict: verified });
    expect(b.path).toBe('verified');
    if (b.path !== 'verified') return;
    expect(b.lines).toEqual(['no changes, verified without a refresh']);
    expect(b.refusal).toBeUndefined();
    expect(b.plan.nodeNames).toEqual(['alpha', 'beta']);
    expect(b.plan.summary.verifiedNoop).toBe(true);
    expect(b.plan.summary.nodes.map((n) => [n.node, n.push, n.deployment])).toEqual(nodes.map((n) => [n, 'none', 'none']));
    expect(b.plan.toApply).toBeUndefined();
  });

  it('GIVEN an apply verified on a state of another submission THEN it is refused (exit 2), naming both', () => {
    const verified: NoopVerdict = { kind: 'verified', movedTags: new Map(), outputs: { ...namesOutput(nodes), [SUBMISSION_OUTPUT]: { value: 'other' } }, sentence: 'no changes' };
    const b = before('apply', { verdict: verified });
    expect(b.path === 'verified' && b.refusal).toMatchObject({ exitCode: ExitCode.usage, message: `the state ${model.stateKey} belongs to submission "other", and this apply is without a submission` });
  });

  it('GIVEN only alpha changed THEN the plan is scoped: -target of alpha, no refresh, the submission checked on the check\'s outputs', () => {
    const b = forTofu('apply', { verdict: scopedVerdict });
    expect(b.path).toBe('scoped');
    expect(b.lines).toEqual([scopedVerdict.sentence]);
    expect(b.fingerprintBefore).toBe(fingerprint);
    expect(b.tofu).toEqual({ destroy: false, line: 'tofu plan', verb: 'plan', replaceRollouts: [], replaceClaims: [], targets: [address.deployment('alpha'), address.push('alpha')], refresh: false });
    expect(b.submission).toEqual({ outputs: namesOutput(nodes) });
    expect(b.ownershipStep).toBeUndefined();
  });

  it('GIVEN no record THEN the full plan says why, plans the whole graph with its refresh, and (apply) reads the submission from tofu', () => {
    const b = forTofu('apply');
    expect(b.path).toBe('full');
    expect(b.lines).toEqual(['full plan: no record of a verified plan of this state on this machine yet (this plan makes one)']);
    expect(b.tofu).toMatchObject({ destroy: false, targets: undefined, refresh: true, replaceRollouts: [], replaceClaims: [] });
    expect(b.submission).toEqual({ outputs: undefined });
  });

  it('GIVEN the check was not asked (DEPLOY_FAST_PLAN=off) THEN a full plan without a line, without a fingerprint; a plan checks no submission', () => {
    const b = forTofu('plan', { verdict: undefined });
    expect(b.path).toBe('full');
    expect(b.lines).toEqual([]);
    expect(b.fingerprintBefore).toBeUndefined();
    expect(b.submission).toBeUndefined();
  });

  it("GIVEN hand edits in alpha's spec and gamma's replicas, a label on beta and a kept restart of delta WHEN apply THEN the ownership step runs, and alpha's and gamma's rollout steps are replaced", () => {
    const b = forTofu('apply', { edits: [envEdit, labelEdit, replicasEdit, keptEdit] });
    expect(b.ownershipStep).toEqual({ fingerprintAgain: true });
    expect(b.tofu).toMatchObject({ replaceRollouts: [address.rollout('alpha'), address.rollout('gamma')] });
    expect(b.undone.size).toBe(0);
  });

  it('GIVEN the same edits WHEN plan THEN no ownership step, and the plan shows the same -replace the apply makes', () => {
    const b = forTofu('plan', { edits: [envEdit, labelEdit, replicasEdit, keptEdit] });
    expect(b.ownershipStep).toBeUndefined();
    expect(b.tofu).toMatchObject({ replaceRollouts: [address.rollout('alpha'), address.rollout('gamma')] });
  });

  it('GIVEN only a kept edit, or an apply without a fingerprint THEN no step, or a step without a fingerprint taken again', () => {
    expect(forTofu('apply', { edits: [keptEdit] }).ownershipStep).toBeUndefined();
    expect(forTofu('apply', { edits: [labelEdit], verdict: undefined }).ownershipStep).toEqual({ fingerprintAgain: false });
  });

  it('GIVEN alpha\'s claim at risk and the flag names alpha WHEN apply THEN the claim is made again (-replace); a claim gone from the cluster is made by the plan, not replaced', () => {
    const risks = judgeObjects({ mode: 'apply', model, allowed: new Set(['alpha']), seen: seen([deletingClaim]), manifests: new Map() }).risks;
    expect(forTofu('apply', { risks, allowed: new Set(['alpha']) }).tofu).toMatchObject({ replaceClaims: [claimAddress('alpha')] });
    expect(forTofu('apply', { risks, allowed: new Set() }).tofu).toMatchObject({ replaceClaims: [] });
    // the state holds beta's claim, the cluster does not
    const state = stateView(fixtureState(3, model.namespace, { beta: { image: 'reg.test:5000/ns1/beta@sha256:b' } }).toString());
    const gone = judgeObjects({ mode: 'apply', model, allowed: new Set(['beta']), seen: { ...seen([]), state }, manifests: new Map() }).risks;
    expect(gone.map((r) => [r.node, r.dangers, r.inCluster])).toEqual([['beta', ['gone'], false]]);
    expect(forTofu('apply', { risks: gone, allowed: new Set(['beta']) }).tofu).toMatchObject({ replaceClaims: [] });
  });

  it('GIVEN a destroy THEN tofu plans -destroy, with no step, no submission, and the claims go with the target', () => {
    const b = forTofu('destroy', { seen: 'a destroy reads nothing of the cluster before its plan' });
    expect(b.tofu).toEqual({ destroy: true, line: 'tofu plan -destroy', verb: 'plan -destroy' });
    expect(b.ownershipStep).toBeUndefined();
    expect(b.submission).toBeUndefined();
    expect(b.claims.destroy).toBe(true);
  });
});

describe('afterOwnershipStep', () => {
  it('GIVEN the step wrote gamma\'s spec only THEN only gamma\'s rollout step is replaced, its edits are resolved, and the fingerprint is the one taken again', () => {
    const b = forTofu('apply', { edits: [envEdit, replicasEdit, labelEdit] });
    const again: TargetFingerprint = { ...fingerprint, serial: 4 };
    const stepped = afterOwnershipStep(b, graph, { removed: [replicasEdit, labelEdit], specWritten: ['gamma'] }, again);
    expect(stepped.tofu).toMatchObject({ replaceRollouts: [address.rollout('gamma')], replaceClaims: [] });
    expect([...stepped.undone]).toEqual([replicasEdit, labelEdit]);
    expect(stepped.fingerprintBefore).toBe(again);
    expect(afterOwnershipStep(b, graph, { removed: [], specWritten: [] }, undefined)).toMatchObject({ fingerprintBefore: undefined, tofu: { replaceRollouts: [] } });
    expect(afterOwnershipStep(b, graph, { removed: [], specWritten: [] }, undefined)).not.toHaveProperty('noFingerprint');
  });

  it('GIVEN the fingerprint taken again could not be taken THEN none is before the plan, and the reason is kept to be said', () => {
    const b = forTofu('apply', { edits: [labelEdit] });
    const stepped = afterOwnershipStep(b, graph, { removed: [labelEdit], specWritten: [] }, 'only the Deployments were read');
    expect(stepped.fingerprintBefore).toBeUndefined();
    expect(stepped.noFingerprint).toBe('the fingerprint taken again after the ownership step could not be taken (only the Deployments were read)');
    expect([...stepped.undone]).toEqual([labelEdit]);
  });
});

describe('decideAfterTofu', () => {
  it('GIVEN a full plan without changes THEN the fingerprint before it is recorded, and the names are tofu\'s outputs', () => {
    const a = after(forTofu('plan'), planResult([]));
    expect(a.record).toBe(fingerprint);
    expect(a.refusal).toBeUndefined();
    expect(a.checkArchives).toBe(false);
    expect(a.answer).toEqual({ path: 'full', summary: a.summary, names: { from: 'tofu' } });
  });

  it('GIVEN a plan without changes but a push planned again, an unresolved hand edit, or a claim at risk THEN no record', () => {
    const risks = judgeObjects({ mode: 'plan', model, allowed: new Set(), seen: seen([deletingClaim]), manifests: new Map() }).risks;
    expect(after(forTofu('plan'), planResult([]), new Set(['alpha'])).record).toBeUndefined();
    // a hand edit tofu sets back, and one only the apply's step removes
    expect(after(forTofu('plan', { edits: [replicasEdit] }), planResult([])).record).toBeUndefined();
    expect(after(forTofu('plan', { edits: [labelEdit] }), planResult([])).record).toBeUndefined();
    expect(after(forTofu('plan', { risks }), planResult([])).record).toBeUndefined();
    // a kept edit is no reason, and the step's undone edits are resolved
    expect(after(forTofu('plan', { edits: [keptEdit] }), planResult([])).record).toBe(fingerprint);
    const stepped = afterOwnershipStep(forTofu('apply', { edits: [replicasEdit] }), graph, { removed: [replicasEdit], specWritten: ['gamma'] }, fingerprint);
    expect(after(stepped, planResult([])).record).toBe(fingerprint);
    // in an apply, a removal the step left (it found nothing to write) holds nothing back; a set-back it left does
    const left = (edit: HandEdit) => afterOwnershipStep(forTofu('apply', { edits: [edit] }), graph, { removed: [], specWritten: [] }, fingerprint);
    expect(after(left(labelEdit), planResult([])).record).toBe(fingerprint);
    expect(after(left(replicasEdit), planResult([])).record).toBeUndefined();
  });

  it('GIVEN a plan without changes that keeps its record THEN it says nothing of one not kept', () => {
    expect(after(forTofu('plan'), planResult([]))).not.toHaveProperty('noRecord');
    expect(after(forTofu('plan', { edits: [keptEdit] }), planResult([]))).not.toHaveProperty('noRecord');
  });

  describe('GIVEN a plan without changes that keeps no record THEN it says why', () => {
    const why = (a: ReturnType<typeof after>) => {
      expect(a.record).toBeUndefined();
      return a.noRecord;
    };
    it('a push planned again', () => {
      expect(why(after(forTofu('plan'), planResult([]), new Set(['beta', 'alpha'])))).toBe('the tags of alpha, beta pushed again (the registry lost them)');
      expect(why(after(forTofu('plan'), planResult([]), new Set(['alpha'])))).toBe('the tag of alpha pushed again (the registry lost it)');
    });
    it('a hand edit neither undone nor set back, named', () => {
      expect(why(after(forTofu('plan', { edits: [labelEdit, keptEdit] }), planResult([])))).toBe(
        'hand edit neither undone by a plan nor set back by tofu (an apply undoes them): beta: metadata.labels[team] by kubectl-label',
      );
      const left = afterOwnershipStep(forTofu('apply', { edits: [replicasEdit, labelEdit] }), graph, { removed: [labelEdit], specWritten: [] }, fingerprint);
      expect(why(after(left, planResult([])))).toBe('hand edit neither undone by the ownership step nor set back by tofu: gamma: spec.replicas by kubectl (scale)');
      const many = [1, 2, 3, 4].map((i): HandEdit => ({ ...labelEdit, field: `metadata.labels[t${i}]` }));
      expect(why(after(forTofu('plan', { edits: many }), planResult([])))).toMatch(/^hand edits .*beta: metadata.labels\[t3\] by kubectl-label; and 1 more$/);
    });
    it('a claim at risk (and the check took no fingerprint over it)', () => {
      const risks = judgeObjects({ mode: 'plan', model, allowed: new Set(), seen: seen([deletingClaim]), manifests: new Map() }).risks;
      expect(why(after(forTofu('plan', { risks }), planResult([])))).toBe('/var/lib claim at risk (alpha-state: deleting)');
      expect(why(after(forTofu('plan', { risks, verdict: fullAtRisk }), planResult([])))).toBe(
        '/var/lib claim at risk (alpha-state: deleting); the check took no fingerprint of the target before the plan',
      );
    });
    it('no fingerprint before the plan: none taken, or none taken again (the check off: nothing said) after the ownership step', () => {
      expect(why(after(forTofu('plan', { verdict: { kind: 'full', reason: 'the check could not read everything it needs (x)' } }), planResult([])))).toBe(
        'the check took no fingerprint of the target before the plan',
      );
      const off = decideAfterTofu({ model, before: forTofu('plan', { verdict: undefined }), seen: seen([]), plan: planResult([]), pushedAgain: new Set(), noFastPlan: 'DEPLOY_FAST_PLAN=off', graph: {}, manifests: new Map() });
      // the check off (by the operator, or a target with SPIRE steps): no run records, nothing is said
      expect(off.noRecord).toBeUndefined();
      // seed 562543228 round 131: the hand edit undone, the fingerprint taken again not taken, nothing said
      const stepped = afterOwnershipStep(forTofu('apply', { edits: [labelEdit] }), graph, { removed: [labelEdit], specWritten: [] }, 'the claims could not be listed (timeout)');
      expect(why(after(stepped, planResult([])))).toBe('the fingerprint taken again after the ownership step could not be taken (the claims could not be listed (timeout))');
    });
    it('but a plan with changes (its apply records) or a destroy says nothing', () => {
      expect(after(forTofu('plan', { edits: [labelEdit] }), planResult([change(address.deployment('beta'), ['update'])]))).not.toHaveProperty('noRecord');
      const b = forTofu('destroy', { seen: 'a destroy reads nothing of the cluster before its plan' });
      expect(decideAfterTofu({ model, before: b, seen: 'x', plan: planResult([]), pushedAgain: new Set(), noFastPlan: 'destroy', graph: {}, manifests: new Map() })).not.toHaveProperty('noRecord');
    });
  });

  it('GIVEN a plan with changes THEN no record, and a plan run answers with the planned names', () => {
    const a = after(forTofu('plan'), planResult([change(address.deployment('beta'), ['update'])], namesOutput(['alpha', 'beta'])));
    expect(a.record).toBeUndefined();
    expect(a.answer).toMatchObject({ path: 'full', names: { from: 'outputs', outputs: namesOutput(['alpha', 'beta']) } });
    expect(a.summary.nodes.find((n) => n.node === 'beta')!.deployment).toBe('update');
  });

  it('GIVEN an apply with changes THEN the saved plan to apply, its archives checked first', () => {
    const b = forTofu('apply');
    const a = after(b, planResult([change(address.push('alpha'), ['delete', 'create'])]));
    expect(a.checkArchives).toBe(true);
    expect(a.refusal).toBeUndefined();
    expect(a.answer).toMatchObject({ path: 'full', toApply: { mode: 'apply', planFile: '/graph/tfplan', scoped: undefined, noFastPlan: undefined, fingerprintBefore: fingerprint, graph: {} } });
    // without changes: nothing to push, nothing to apply, the state's names
    const none = after(forTofu('apply'), planResult([]));
    expect(none.checkArchives).toBe(false);
    expect(none.answer).toEqual({ path: 'full', summary: none.summary, names: { from: 'tofu' } });
  });

  it("GIVEN an apply whose plan replaces alpha's claim (the StorageClass changed) without the flag THEN it is refused (exit 2); a plan only names it", () => {
    const forced = { ...change(claimAddress('alpha'), ['delete', 'create']), replacePaths: ['spec[0].storage_class_name'] };
    const refused = after(forTofu('apply'), planResult([forced]));
    expect(refused.refusal).toMatchObject({ exitCode: ExitCode.usage, message: expect.stringContaining('  - node alpha: claim alpha-state would be replaced, forced by spec[0].storage_class_name: the StorageClass') });
    const planned = after(forTofu('plan'), planResult([forced]));
    expect(planned.refusal).toBeUndefined();
    expect(planned.summary.claimLosses.map((l) => [l.node, l.cause, l.allowed])).toEqual([['alpha', 'forced', false]]);
    expect(after(forTofu('apply', { allowed: new Set(['alpha']) }), planResult([forced])).refusal).toBeUndefined();
  });

  it("GIVEN the flag let alpha's claim at risk go THEN its -replace is the claim's at-risk line, allowed, and nothing is refused", () => {
    const allowed = new Set(['alpha']);
    const risks = judgeObjects({ mode: 'apply', model, allowed, seen: seen([deletingClaim]), manifests: new Map() }).risks;
    const requested = { ...change(claimAddress('alpha'), ['delete', 'create']), actionReason: 'replace_by_request' };
    const a = after(forTofu('apply', { risks, allowed, verdict: fullAtRisk }), planResult([requested]));
    expect(a.refusal).toBeUndefined();
    expect(a.summary.claimLosses.map((l) => [l.node, l.cause, l.allowed, l.address])).toEqual([['alpha', 'at-risk', true, claimAddress('alpha')]]);
    expect(a.answer).toMatchObject({ toApply: { mode: 'apply', fingerprintBefore: undefined } });
  });

  it('GIVEN a destroy with changes THEN the claims go unrefused, no archive is checked, and the plan is applied without a record after it', () => {
    const b = forTofu('destroy', { seen: 'a destroy reads nothing of the cluster before its plan' });
    const a = decideAfterTofu({ model, before: b, seen: 'a destroy reads nothing', plan: planResult([change(claimAddress('alpha'), ['delete'])]), pushedAgain: new Set(), noFastPlan: 'destroy', graph: {}, manifests: new Map() });
    expect(a.refusal).toBeUndefined();
    expect(a.checkArchives).toBe(false);
    expect(a.summary.claimLosses.map((l) => [l.node, l.cause, l.allowed])).toEqual([['alpha', 'destroy', true]]);
    expect(a.answer).toMatchObject({ toApply: { mode: 'destroy', noFastPlan: 'destroy', fingerprintBefore: undefined } });
  });

  it("GIVEN a scoped plan THEN the other nodes' moved tags are the check's, and a plan's names the check's outputs", () => {
    const a = after(forTofu('plan', { verdict: scopedVerdict }), planResult([change(address.push('alpha'), ['delete', 'create'])]));
    expect(a.answer).toMatchObject({ path: 'scoped', names: { from: 'outputs', outputs: namesOutput(nodes) } });
    expect(a.summary.nodes.find((n) => n.node === 'beta')!.tagMoved).toEqual({ recorded: 'sha256:b1', current: 'sha256:b2' });
  });
});

describe('namesFrom', () => {
  it('GIVEN each source THEN the planned outputs first, then the check\'s, then tofu\'s; a destroy none', () => {
    const planned = namesOutput(['alpha']);
    expect(namesFrom('destroy', planned, undefined)).toEqual({ from: 'none' });
    expect(namesFrom('apply', planned, { outputs: namesOutput(nodes) })).toEqual({ from: 'outputs', outputs: planned });
    expect(namesFrom('plan', undefined, { outputs: namesOutput(nodes) })).toEqual({ from: 'outputs', outputs: namesOutput(nodes) });
    expect(namesFrom('plan', undefined, undefined)).toEqual({ from: 'tofu' });
  });
});

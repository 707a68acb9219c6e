/**
 * The claims at risk (claim-risk.ts), from claim and PersistentVolume objects as the API lists
 * them: each field that puts the data at risk, what becomes of the data by reclaim policy, the
 * commands that keep it, and (law 16) generated claim states, whose seed every message names
 * (DEPLOY_TEST_SEED replays one).
 */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import { DeployError, ExitCode } from '../../../../src/errors.js';
import { describeClaimLoss, findClaimLosses, refuseClaimRisks } from '../../../../src/workflow/guard/claim-guard.js';
import { claimRisksOf, describeFate, findClaimRisks, keepDataSteps, stateClaimNodes, type ClaimRisk, type ClaimRiskInput } from '../../../../src/workflow/guard/claim-risk.js';
import { formatTargetSummary, summarizePlan } from '../../../../src/workflow/summary/plan-summary.js';
import { samplePlan } from '../../../support/cli.js';
import { seededRandom } from '../../../support/seeded-random.js';

const NS = 'demo';
const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json');
const [all] = buildTargets(plan, loadCoordinates({}, { K8S_REGISTRY: 'reg', K8S_NAMESPACE: NS }, process.cwd()), '/p/g.json', ['all']);

interface ClaimFields {
  uid?: string;
  deletionTimestamp?: string;
  phase?: string;
  volumeName?: string;
}
function claim(name: string, f: ClaimFields = {}) {
  return {
    metadata: { name, namespace: NS, uid: f.uid ?? `uid-${name}`, ...(f.deletionTimestamp ? { deletionTimestamp: f.deletionTimestamp, finalizers: ['kubernetes.io/pvc-protection'] } : {}) },
    spec: { storageClassName: 'standard', volumeName: f.volumeName ?? `pv-${name}`, accessModes: ['ReadWriteOnce'] },
    status: { phase: f.phase ?? 'Bound' },
  };
}
interface VolumeFields {
  phase?: string;
  policy?: string;
  claimName?: string;
  claimUid?: string;
  created?: string;
  since?: string;
  deletionTimestamp?: string;
  message?: string;
}
function volume(name: string, f: VolumeFields = {}) {
  const claimName = f.claimName ?? name.replace(/^pv-/, '');
  return {
    metadata: { name, uid: `uid-${name}`, creationTimestamp: f.created ?? '2026-01-01T00:00:00Z', ...(f.deletionTimestamp ? { deletionTimestamp: f.deletionTimestamp } : {}) },
    spec: { persistentVolumeReclaimPolicy: f.policy ?? 'Delete', storageClassName: 'standard', claimRef: { kind: 'PersistentVolumeClaim', namespace: NS, name: claimName, uid: f.claimUid ?? `uid-${claimName}` } },
    status: { phase: f.phase ?? 'Bound', ...(f.since ? { lastPhaseTransitionTime: f.since } : {}), ...(f.message ? { message: f.message } : {}) },
  };
}
const input = (over: Partial<ClaimRiskInput>): ClaimRiskInput => ({ namespace: NS, nodes: ['web'], claims: [], volumes: [], stateClaims: new Set(['web']), ...over });

describe('findClaimRisks: the fields that put a claim at risk', () => {
  it('GIVEN a bound claim on a Bound volume THEN nothing is at risk', () => {
    expect(findClaimRisks(input({ claims: [claim('web-state')], volumes: [volume('pv-web-state')] }))).toEqual([]);
  });

  it('GIVEN a claim being deleted while its pod holds it (pvc-protection) on a Delete volume THEN it is named, since its deletionTimestamp, and its volume goes with it', () => {
    const [r, ...rest] = findClaimRisks(input({ claims: [claim('web-state', { deletionTimestamp: '2026-05-01T10:00:00Z' })], volumes: [volume('pv-web-state')] }));
    expect(rest).toEqual([]);
    expect(r).toMatchObject({ node: 'web', claim: 'web-state', dangers: ['deleting'], since: '2026-05-01T10:00:00Z', inCluster: true, volume: { name: 'pv-web-state', reclaimPolicy: 'Delete', phase: 'Bound' } });
    expect(describeFate(r!)).toBe('when the claim goes, volume pv-web-state (reclaim policy Delete, Bound) goes with it, and the data on it');
    expect(keepDataSteps(r!, NS)).toEqual([
      `kubectl patch pv pv-web-state -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'`,
      'kubectl -n demo scale deployment web --replicas=0   (the claim goes when its pod stops)',
      `kubectl patch pv pv-web-state --type json -p '[{"op":"remove","path":"/spec/claimRef"}]'   (the volume becomes Available)`,
      'a claim web-state in namespace demo with spec.volumeName: pv-web-state (its StorageClass and size), then deploy apply again',
    ]);
  });

  it('GIVEN the same on a Retain volume THEN the data stays on it, and no patch of the policy is asked for', () => {
    const [r] = findClaimRisks(input({ claims: [claim('web-state', { deletionTimestamp: '2026-05-01T10:00:00Z' })], volumes: [volume('pv-web-state', { policy: 'Retain' })] }));
    expect(describeFate(r!)).toMatch(/^when the claim goes, the data stays on volume pv-web-state \(reclaim policy Retain, Bound\), Released/);
    expect(keepDataSteps(r!, NS).some((s) => s.includes('persistentVolumeReclaimPolicy'))).toBe(false);
  });

  it('GIVEN the claim is gone while the state holds it, and its Delete volume went with it THEN it is named gone, and nothing is left to keep', () => {
    const [r] = findClaimRisks(input({ claims: [], volumes: [] }));
    expect(r).toMatchObject({ dangers: ['gone'], inCluster: false, volume: undefined, since: undefined });
    expect(describeFate(r!)).toBe('no volume that was bound to it is left in the cluster: the data went with it');
    expect(keepDataSteps(r!, NS)).toEqual([]);
  });

  it('GIVEN the claim is gone and a Retain volume that named it is Released THEN both are named, since the phase transition, and the volume is the newest of those naming the claim', () => {
    const older = volume('pv-old', { claimName: 'web-state', claimUid: 'uid-first', phase: 'Released', policy: 'Retain', created: '2025-01-01T00:00:00Z' });
    const newer = volume('pv-new', { claimName: 'web-state', claimUid: 'uid-second', phase: 'Released', policy: 'Retain', created: '2026-01-01T00:00:00Z', since: '2026-05-02T08:00:00Z' });
    const [r] = findClaimRisks(input({ volumes: [older, newer] }));
    expect(r).toMatchObject({ dangers: ['gone', 'volume-released'], since: '2026-05-02T08:00:00Z', volume: { name: 'pv-new', phase: 'Released' } });
    expect(describeFate(r!)).toMatch(/^the data is on volume pv-new \(reclaim policy Retain, Released\)/);
    // already Retain, the claim already gone: free the volume, bind a claim to it
    expect(keepDataSteps(r!, NS)).toHaveLength(2);
    expect(keepDataSteps(r!, NS)[0]).toContain('kubectl patch pv pv-new --type json');
  });

  it('GIVEN a claim Lost, its volume gone THEN it is named Lost and the volume missing', () => {
    const [r] = findClaimRisks(input({ claims: [claim('web-state', { phase: 'Lost', volumeName: 'pv-gone' })] }));
    expect(r).toMatchObject({ dangers: ['lost'], missingVolume: 'pv-gone', volume: undefined });
    expect(describeFate(r!)).toBe('its volume pv-gone is not in the cluster: the data is gone');
  });

  it('GIVEN a claim whose volume Failed its reclaim, or is being deleted THEN each is named with the API\'s message', () => {
    const [f] = findClaimRisks(input({ claims: [claim('web-state')], volumes: [volume('pv-web-state', { phase: 'Failed', message: 'host_path deleter only supports /tmp/.+' })] }));
    expect(f!.dangers).toEqual(['volume-failed']);
    const [d] = findClaimRisks(input({ claims: [claim('web-state')], volumes: [volume('pv-web-state', { deletionTimestamp: '2026-05-03T00:00:00Z' })] }));
    expect(d).toMatchObject({ dangers: ['volume-deleting'], since: '2026-05-03T00:00:00Z' });
  });

  it('GIVEN a claim made again on purpose, bound to a new volume, and a Released volume of the claim before THEN the old volume is not this claim\'s', () => {
    const now = claim('web-state', { uid: 'uid-new', volumeName: 'pv-new' });
    const old = volume('pv-old', { claimName: 'web-state', claimUid: 'uid-old', phase: 'Released', policy: 'Retain' });
    expect(findClaimRisks(input({ claims: [now], volumes: [old, volume('pv-new', { claimName: 'web-state', claimUid: 'uid-new' })] }))).toEqual([]);
  });

  it('GIVEN a claim the state does not hold and the cluster does not have (a first apply, a target deployed again after destroy) THEN nothing is at risk, whatever volume named it', () => {
    const old = volume('pv-old', { claimName: 'web-state', phase: 'Released', policy: 'Retain' });
    expect(findClaimRisks(input({ stateClaims: new Set(), volumes: [old] }))).toEqual([]);
  });

  it('GIVEN a claim of a node that is not in the target THEN it is not judged here (the node-removed loss says it)', () => {
    expect(findClaimRisks(input({ nodes: [], claims: [claim('web-state', { deletionTimestamp: '2026-05-01T10:00:00Z' })] }))).toEqual([]);
  });

  it('GIVEN the volumes could not be read THEN the claim\'s own fields still count, and the fate says why it is not known', () => {
    const [r] = findClaimRisks(input({ claims: [claim('web-state', { deletionTimestamp: '2026-05-01T10:00:00Z' })], volumes: 'list PersistentVolumes: HTTP 403: forbidden' }));
    expect(r).toMatchObject({ dangers: ['deleting'], volumesUnread: 'list PersistentVolumes: HTTP 403: forbidden', missingVolume: undefined });
    expect(describeFate(r!)).toBe('what becomes of the data is not known: the volumes could not be read (list PersistentVolumes: HTTP 403: forbidden)');
    expect(keepDataSteps(r!, NS)[0]).toBe("find the volume with: kubectl get pv -o wide | grep ' demo/web-state '; then as below");
  });
});

describe('claimRisksOf: the objects as read for a run', () => {
  const stateClaim = { mode: 'managed' as const, type: 'kubernetes_persistent_volume_claim_v1', name: 'node-alpha_state_26D7464E', instances: [{ attributes: {} }] };
  it('GIVEN the state holds alpha\'s claim and the cluster none THEN alpha\'s claim is gone, and beta (never made) is not at risk', () => {
    expect(stateClaimNodes([stateClaim, { ...stateClaim, name: 'node-beta_state_26D7464E', instances: [] }])).toEqual(new Set(['alpha']));
    const risks = claimRisksOf(all!, { claims: [], volumes: [], state: { resources: [stateClaim] } });
    expect(risks).toEqual([expect.objectContaining({ node: 'alpha', dangers: ['gone'] })]);
  });
  it('GIVEN the claims were not read THEN it says so rather than answer', () => {
    expect(claimRisksOf(all!, { volumes: [] })).toBe('the claims were not read');
  });
});

describe('the guard over claims at risk (claim-guard.ts)', () => {
  const deleting = findClaimRisks(input({ nodes: ['alpha'], claims: [claim('alpha-state', { deletionTimestamp: '2026-05-01T10:00:00Z' })], volumes: [volume('pv-alpha-state')] }));
  const addresses = new Map([['alpha', 'kubernetes_persistent_volume_claim_v1.node-alpha_state_26D7464E']]);

  it('GIVEN a claim being deleted and no flag THEN apply is refused with exit 2, naming node, claim, since when, the fate, the Retain patch and the flag', () => {
    let thrown: unknown;
    try {
      refuseClaimRisks(all!, deleting, new Set());
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DeployError);
    const e = thrown as DeployError;
    expect(e.exitCode).toBe(ExitCode.usage);
    const lines = e.message.split('\n');
    expect(lines[0]).toBe('apply refused before changing anything: in target all (namespace demo) the /var/lib claim of a node that stays is at risk, and an apply would start it on a new, empty claim:');
    expect(lines[1]).toMatch(/^ {2}- node alpha: claim alpha-state is being deleted since 2026-05-01T10:00:00Z \(the kubernetes.io\/pvc-protection finalizer holds it while its pod runs/);
    expect(lines[1]).toContain('volume pv-alpha-state (reclaim policy Delete, Bound) goes with it');
    expect(lines).toContain(`      1. kubectl patch pv pv-alpha-state -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'`);
    expect(e.hint).toBe('keep the data with the steps above, then apply again; to start on an empty /var/lib on purpose, apply with --allow-volume-replacement alpha');
  });

  it('GIVEN the flag names the node THEN it is not refused, and the plan\'s line says the apply replaces the claim', () => {
    expect(() => refuseClaimRisks(all!, deleting, new Set(['alpha']))).not.toThrow();
    expect(() => refuseClaimRisks(all!, deleting, new Set(['beta']))).toThrow(DeployError);
    const [loss] = findClaimLosses(all!, [], { destroy: false, allowed: new Set(['alpha']), risks: deleting, claimAddresses: addresses });
    expect(loss).toMatchObject({ node: 'alpha', claim: 'alpha-state', cause: 'at-risk', change: 'replace', allowed: true, address: addresses.get('alpha') });
    expect(describeClaimLoss(loss!)).toMatch(/^\/var\/lib of node alpha is at risk: claim alpha-state is being deleted since 2026-05-01T10:00:00Z .*: allowed by --allow-volume-replacement alpha: the apply replaces it with a new, empty claim$/);
  });

  it('GIVEN the plan text THEN the claim at risk is a line of its own, through the claim losses, and the -replace the run asked for is not said twice', () => {
    const requested = { address: addresses.get('alpha')!, name: 'node-alpha_state_26D7464E', actions: ['delete', 'create'], actionReason: 'replace_by_request' };
    const s = summarizePlan(all!, [requested], true, { destroy: false, allowed: new Set(), risks: deleting, claimAddresses: addresses });
    expect(s.claimLosses.map((l) => l.cause)).toEqual(['at-risk']);
    const text = formatTargetSummary(s).split('\n');
    expect(text.filter((l) => l.includes('alpha-state'))).toEqual([expect.stringMatching(/^ {2}\/var\/lib of node alpha is at risk: claim alpha-state is being deleted .*: apply refuses every change without --allow-volume-replacement alpha$/)]);
  });

  it('GIVEN a destroy THEN a claim at risk is no loss of its own (the destroy takes every claim)', () => {
    expect(findClaimLosses(all!, [], { destroy: true, allowed: new Set(), risks: deleting })).toEqual([]);
  });
});

describe('generated claim states (law 16)', () => {
  const SEED = Number(process.env.DEPLOY_TEST_SEED ?? 50_2026);
  const RUNS = 400;
  const pick = <T,>(next: () => number, xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;

  it('a claim is at risk exactly when the data on /var/lib would not survive the next pod replacement as it is, and every refusal says how to keep it', () => {
    const next = seededRandom(SEED);
    for (let run = 0; run < RUNS; run++) {
      const why = `seed ${SEED}, run ${run}`;
      const inState = next() < 0.8;
      const present = next() < 0.7;
      const deleting = present && next() < 0.3;
      const claimPhase = pick(next, ['Bound', 'Bound', 'Pending', 'Lost']);
      const hasVolume = next() < 0.8;
      const volumePhase = pick(next, ['Bound', 'Bound', 'Released', 'Failed', 'Available']);
      const policy = pick(next, ['Delete', 'Retain', 'Recycle']);
      const volumeDeleting = next() < 0.1;
      const volumesRead = next() < 0.9;
      const claims = present ? [claim('web-state', { ...(deleting ? { deletionTimestamp: '2026-05-01T10:00:00Z' } : {}), phase: claimPhase })] : [];
      const vols = hasVolume ? [volume('pv-web-state', { phase: volumePhase, policy, ...(volumeDeleting ? { deletionTimestamp: '2026-05-01T11:00:00Z' } : {}) })] : [];
      const risks = findClaimRisks(input({ claims, volumes: volumesRead ? vols : 'forbidden', stateClaims: new Set(inState ? ['web'] : []) }));
      // safe: the claim is there, not being deleted, not Lost, and its volume (when read) is neither released, failed nor being deleted
      const volumeSafe = !volumesRead || !hasVolume || (!['Released', 'Failed'].includes(volumePhase) && !volumeDeleting);
      const safe = present ? !deleting && claimPhase !== 'Lost' && volumeSafe : !inState;
      expect(risks.length === 0, `${why}: ${JSON.stringify({ inState, present, deleting, claimPhase, hasVolume, volumePhase, policy, volumeDeleting, volumesRead })}`).toBe(safe);
      for (const r of risks) {
        expect(r.dangers.length, why).toBeGreaterThan(0);
        let message = '';
        try {
          refuseClaimRisks({ ...all!, namespace: NS, nodes: [{ ...all!.nodes[0]!, name: 'web' }] }, [r], new Set());
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message, why).toContain('  - node web: claim web-state is ');
        const steps = keepDataSteps(r, NS);
        // a volume known and not yet Retain: the patch to Retain is the first step
        if (r.volume !== undefined && r.volume.reclaimPolicy !== 'Retain') expect(steps[0], why).toContain('"persistentVolumeReclaimPolicy":"Retain"');
        if (steps.length > 0) expect(message, why).toContain(`      1. ${steps[0]}`);
        else expect(message, why).toContain('nothing of its data is left in the cluster to keep');
      }
    }
  });
});

import { describe, expect, it } from 'vitest';
import { classifyRollout, type Verdict } from '../../../../src/rollout/classify/classify.js';
import { previousReplicaSet } from '../../../../src/rollout/snapshot.js';
import { fixtureNames, loadFixture } from '../load-fixture.js';

// The fixtures' objects are timed around 2026-11-30T04:10:00Z; the watch began just before.
const WATCH_STARTED = Date.parse('2026-11-30T04:10:00Z');
const NOW = Date.parse('2026-11-30T04:10:06Z');

function classify(name: string, now = NOW): Verdict {
  return classifyRollout(loadFixture(name).snapshot, { now, watchStartedAt: WATCH_STARTED });
}

describe('classifyRollout on recorded API objects', () => {
  for (const name of fixtureNames()) {
    const fx = loadFixture(name);
    it(`${name}: ${fx.scenario}`, () => {
      // GIVEN the objects of the scenario WHEN classified THEN the verdict is the expected one
      const v = classifyRollout(fx.snapshot, { now: NOW, watchStartedAt: WATCH_STARTED });
      expect(v.kind).toBe(fx.expect.kind);
      if (fx.expect.reason) expect(v.kind === 'failed' && v.reason).toBe(fx.expect.reason);
      if (fx.expect.phase) expect(v.kind === 'waiting' && v.phase).toBe(fx.expect.phase);
      if (fx.expect.systemdState) expect(v.kind !== 'ready' && v.systemdState).toBe(fx.expect.systemdState);
      if (fx.expect.failedUnits) expect(v.kind === 'failed' && v.failedUnits).toEqual(fx.expect.failedUnits);
      if (fx.expect.previous === null) expect(previousReplicaSet(fx.snapshot)).toBeUndefined();
    });
  }

  it('every terminal reason of the issue has a fixture', () => {
    const reasons = new Set(fixtureNames().map((n) => loadFixture(n).expect.reason).filter(Boolean));
    for (const r of ['systemd-degraded', 'systemd-maintenance', 'image-pull', 'container-config', 'crash-loop', 'unschedulable', 'progress-deadline', 'admission']) {
      expect(reasons, r).toContain(r);
    }
  });

  it('names the failed unit and the pod when systemd is degraded', () => {
    const v = classify('terminal-systemd-degraded');
    expect(v).toMatchObject({ kind: 'failed', reason: 'systemd-degraded', pod: 'web-7b9c4d6f5-x2k9p', systemdState: 'degraded' });
    expect(v.kind === 'failed' && v.message).toContain('broken.service');
    // the evidence time is the kubelet's report of `degraded`, for the benchmark
    expect(v.kind === 'failed' && v.evidenceAt).toBe(Date.parse('2026-11-30T04:10:05Z'));
  });

  it('a second degraded report is enough when the kubelet does not say the container started', () => {
    const fx = loadFixture('slow-degraded-once-started-unknown');
    const unhealthy = fx.snapshot.events.filter((e) => e.reason === 'Unhealthy').at(-1)!;
    const twice = { ...fx.snapshot, events: [...fx.snapshot.events.filter((e) => e !== unhealthy), { ...unhealthy, count: 2, lastTimestamp: '2026-11-30T04:10:07Z' }] };
    const v = classifyRollout(twice, { now: NOW, watchStartedAt: WATCH_STARTED });
    expect(v).toMatchObject({ kind: 'failed', reason: 'systemd-degraded', failedUnits: ['broken.service'] });
  });

  it('says what the scheduler and the claim say when the pod cannot be scheduled', () => {
    const v = classify('terminal-unschedulable-no-storage-class');
    expect(v.kind).toBe('failed');
    const msg = v.kind === 'failed' ? v.message : '';
    expect(msg).toContain('unbound immediate PersistentVolumeClaims');
    expect(msg).toContain('claim web-state is Pending (storage class "does-not-exist")');
    expect(msg).toContain('storageclass.storage.k8s.io "does-not-exist" not found');
  });

  it("waits for a claim a provisioner works on (a fleet's first deploy), until the deadline", () => {
    const within = classify('slow-unschedulable-claim-provisioning', WATCH_STARTED + 9_000);
    expect(within).toMatchObject({ kind: 'waiting', phase: 'scheduling' });
    const later = classify('slow-unschedulable-claim-provisioning', WATCH_STARTED + 60_000);
    expect(later).toMatchObject({ kind: 'waiting', phase: 'scheduling' });
  });

  it('waits for a claim the volume controller has not taken up yet (no provisioner named, no event: 200 claims made at once)', () => {
    const fx = loadFixture('slow-unschedulable-claim-provisioning');
    const claim = fx.snapshot.claims[0]!;
    const { ['volume.kubernetes.io/storage-provisioner']: _a, ['volume.beta.kubernetes.io/storage-provisioner']: _b, ...rest } = claim.metadata.annotations ?? {};
    const untouched = { ...claim, metadata: { ...claim.metadata, annotations: rest } };
    const otherEvents = fx.snapshot.events.filter((e) => e.involvedObject.kind !== 'PersistentVolumeClaim');
    const snapshot = { ...fx.snapshot, claims: [untouched], events: otherEvents } as typeof fx.snapshot;
    const v = classifyRollout(snapshot, { now: WATCH_STARTED + 60_000, watchStartedAt: WATCH_STARTED });
    expect(v).toMatchObject({ kind: 'waiting', phase: 'scheduling' });
    expect(v.kind === 'waiting' && v.detail).toContain(`claim ${claim.metadata.name} is Pending, not yet taken up by the volume controller`);
    // once the controller said something and named no provisioner, it is judged as before
    const said = { ...fx.snapshot.events[0]!, metadata: { ...fx.snapshot.events[0]!.metadata, uid: 'e0000000-0000-4000-8000-0000000009f2' }, involvedObject: { kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid }, type: 'Normal', reason: 'FailedBinding', message: 'no persistent volumes available for this claim and no storage class is set' };
    const judged = classifyRollout({ ...snapshot, events: [...otherEvents, said] } as typeof fx.snapshot, { now: WATCH_STARTED + 60_000, watchStartedAt: WATCH_STARTED });
    expect(judged).toMatchObject({ kind: 'failed', reason: 'unschedulable' });
  });

  it("waits for the scheduler's next try when the claim is bound but the pod's condition is from before (a 200-node first apply)", () => {
    // GIVEN the pod's PodScheduled condition says "unbound immediate PersistentVolumeClaims"
    // AND its claim has been bound since (the provisioner made the volume)
    const fx = loadFixture('slow-unschedulable-claim-provisioning');
    const claim = fx.snapshot.claims[0]!;
    const bound = { ...claim, spec: { ...claim.spec, volumeName: 'pvc-c1a1b2c3' }, status: { ...claim.status, phase: 'Bound' } };
    const snapshot = { ...fx.snapshot, claims: [bound] } as typeof fx.snapshot;
    // WHEN judged long after the claim grace THEN it waits for the scheduler, naming the claim
    const v = classifyRollout(snapshot, { now: WATCH_STARTED + 60_000, watchStartedAt: WATCH_STARTED });
    expect(v).toMatchObject({ kind: 'waiting', phase: 'scheduling' });
    expect(v.kind === 'waiting' && v.detail).toContain(`its claim ${claim.metadata.name} is bound now`);
    // AND a scheduler that gives another reason with the claim bound still fails the rollout
    const pod = fx.snapshot.pods[0]!;
    const conflict = { ...pod, status: { ...pod.status, conditions: pod.status!.conditions!.map((c) => ({ ...c, message: '0/1 nodes are available: 1 node(s) had volume node affinity conflict.' })) } };
    const judged = classifyRollout({ ...snapshot, pods: [conflict] } as typeof fx.snapshot, { now: WATCH_STARTED + 60_000, watchStartedAt: WATCH_STARTED });
    expect(judged).toMatchObject({ kind: 'failed', reason: 'unschedulable' });
    expect(judged.kind === 'failed' && judged.message).toContain('volume node affinity conflict');
  });

  it('gives a provisioner that reported ProvisioningFailed 10 s of grace, then fails as unschedulable', () => {
    const fx = loadFixture('slow-unschedulable-claim-provisioning');
    const claim = fx.snapshot.claims[0]!;
    const failedEvent = {
      ...fx.snapshot.events[0]!,
      metadata: { ...fx.snapshot.events[0]!.metadata, name: `${claim.metadata.name}.provisioning-failed`, uid: 'e0000000-0000-4000-8000-0000000009f1' },
      involvedObject: { kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
      type: 'Warning',
      reason: 'ProvisioningFailed',
      message: 'failed to provision volume: out of space',
    };
    const snapshot = { ...fx.snapshot, events: [...fx.snapshot.events, failedEvent] } as typeof fx.snapshot;
    const within = classifyRollout(snapshot, { now: WATCH_STARTED + 9_000, watchStartedAt: WATCH_STARTED });
    expect(within).toMatchObject({ kind: 'waiting', phase: 'scheduling' });
    const after = classifyRollout(snapshot, { now: WATCH_STARTED + 10_500, watchStartedAt: WATCH_STARTED });
    expect(after).toMatchObject({ kind: 'failed', reason: 'unschedulable' });
    expect(after.kind === 'failed' && after.message).toContain('a provisioner is at work: failed to provision volume: out of space');
  });

  it('reports the pull error of a digest that does not exist', () => {
    const v = classify('terminal-image-pull-backoff');
    expect(v.kind === 'failed' && v.message).toMatch(/^ImagePullBackOff: .*not found/);
  });

  it('reports the last exit code of a crash loop', () => {
    const v = classify('terminal-crash-loop');
    expect(v.kind === 'failed' && v.message).toContain('code 255');
  });

  it('waits for a rollback patch the watch has not shown yet (minGeneration)', () => {
    const fx = loadFixture('ready-good-after-good');
    const v = classifyRollout(fx.snapshot, { now: NOW, watchStartedAt: WATCH_STARTED, minGeneration: 3 });
    expect(v).toMatchObject({ kind: 'waiting', phase: 'controller' });
  });

  it('ignores a ProgressDeadlineExceeded left from before this wait (e.g. right after a rollback)', () => {
    const fx = loadFixture('terminal-progress-deadline');
    const v = classifyRollout(fx.snapshot, { now: Date.parse('2026-11-30T04:16:00Z'), watchStartedAt: Date.parse('2026-11-30T04:15:30Z') });
    expect(v).toMatchObject({ kind: 'waiting', phase: 'booting' });
  });

  it('a deadline on a pod still booting says what the pod was still waiting for', () => {
    const v = classify('terminal-progress-deadline');
    expect(v).toMatchObject({ kind: 'failed', reason: 'progress-deadline', pod: 'web-7b9c4d6f5-x2k9p' });
    expect(v.kind === 'failed' && v.message).toMatch(/progress deadline \(300s\) passed: .*; still booting: systemd is booting/);
  });

  it('the rollback wait judges the previous revision, not a deadline the controller set for the failed one', () => {
    // GIVEN the rollback patch (generation 3) made the previous ReplicaSet current again,
    // while the controller set ProgressDeadlineExceeded (for the failed revision) after this
    // wait began, and the failed revision's pod still stops (Recreate)
    const fx = loadFixture('terminal-progress-deadline');
    const dep = fx.snapshot.deployment!;
    const [prev, failed] = fx.snapshot.replicaSets;
    const rolledBack = {
      ...fx.snapshot,
      deployment: {
        ...dep,
        metadata: { ...dep.metadata, generation: 3 },
        spec: { ...dep.spec, template: prev!.spec.template! },
        status: { ...dep.status!, observedGeneration: 3 },
      },
      replicaSets: [{ ...prev!, metadata: { ...prev!.metadata, annotations: { ...prev!.metadata.annotations, 'deployment.kubernetes.io/revision': '3' } } }, failed!],
      pods: fx.snapshot.pods.map((p) => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-11-30T04:14:58Z' } })),
    };
    const ctx = { now: Date.parse('2026-11-30T04:15:02Z'), watchStartedAt: Date.parse('2026-11-30T04:14:58Z'), minGeneration: 3 };
    // WHEN the rollback's wait classifies THEN it waits for the old pod to stop
    expect(classifyRollout(rolledBack, { ...ctx, ignoreProgressDeadline: true })).toMatchObject({ kind: 'waiting', phase: 'old-pod' });
    // (the first wait's rules would call that a failure: the bug of issue 18)
    expect(classifyRollout(rolledBack, ctx)).toMatchObject({ kind: 'failed', reason: 'progress-deadline' });
  });

  it('a Ready pod being deleted never makes the revision ready: the ReplicaSet replaces it (replicas 0 by hand, then 1 again)', () => {
    // GIVEN a good rollout whose pod is being deleted while still Ready, the Deployment's
    // counts not yet updated (the replicas scaled to 0 and back before the controllers caught up)
    const fx = loadFixture('ready-good-after-good');
    expect(classify('ready-good-after-good').kind).toBe('ready');
    const stopping = { ...fx.snapshot, pods: fx.snapshot.pods.map((p) => ({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-11-30T04:10:05Z' } })) };
    const name = fx.snapshot.pods.find((p) => p.metadata.ownerReferences?.length)!.metadata.name;
    // WHEN classified THEN it waits for the ReplicaSet's new pod, naming the one being deleted
    const v = classifyRollout(stopping, { now: NOW, watchStartedAt: WATCH_STARTED });
    expect(v).toMatchObject({ kind: 'waiting', phase: 'creating-pod' });
    expect(v.kind === 'waiting' && v.detail).toContain(`in place of pod ${name}, which is being deleted`);
    // AND once the new pod is there (not Ready yet) it is that pod's verdict, still a wait
    const fresh = fx.snapshot.pods.map((p) => ({
      ...p,
      metadata: { ...p.metadata, name: `${p.metadata.name}-new`, uid: `${p.metadata.uid}-new`, creationTimestamp: '2026-11-30T04:10:05Z' },
      status: { ...p.status, phase: 'Pending', conditions: [], containerStatuses: [] },
    }));
    expect(classifyRollout({ ...stopping, pods: [...stopping.pods, ...fresh] }, { now: NOW, watchStartedAt: WATCH_STARTED }).kind).toBe('waiting');
  });

  it('a Deployment that is gone is a failure, not a wait', () => {
    const fx = loadFixture('slow-booting');
    const v = classifyRollout({ ...fx.snapshot, deployment: undefined }, { now: NOW, watchStartedAt: WATCH_STARTED });
    expect(v).toMatchObject({ kind: 'failed', reason: 'deployment-missing' });
  });
});

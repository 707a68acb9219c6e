import { describe, expect, it } from 'vitest';
import { durationOf } from '../../../src/config/duration.js';
import { EventSchema, PodSchema, type Pod } from '../../../src/kube/api-objects.js';
import type { RolloutSnapshot } from '../../../src/rollout/snapshot.js';
import { EVIDENCE_GRACE_MS, judgeSoak, soakHeld, watchSoak } from '../../../src/rollout/soak.js';
import { loadFixture } from './load-fixture.js';
import { settableWatch } from './settable-watch.js';

/** The recorded shape of a good rollout: pod web-7b9c4d6f5-x2k9p Ready, counted available. */
const READY = loadFixture('ready-good-after-good').snapshot;
const POD = 'web-7b9c4d6f5-x2k9p';
const T = Date.parse('2026-11-30T04:11:00Z');

/** READY with its pod changed by `edit` (a deep copy), and `events` added. */
function withPod(edit: (p: any) => void, events: unknown[] = []): RolloutSnapshot {
  const pods = READY.pods.map((p) => {
    const copy = structuredClone(p) as any;
    if (copy.metadata.name === POD) edit(copy);
    return PodSchema.parse(copy);
  });
  return { ...READY, pods, events: [...READY.events, ...events.map((e) => EventSchema.parse(e))] };
}

/** Ready falls: the Ready condition and the container's ready flag go false. */
function notReady(p: any) {
  for (const c of p.status.conditions) if (c.type === 'Ready' || c.type === 'ContainersReady') c.status = 'False';
  p.status.containerStatuses[0].ready = false;
}

/** The kubelet's report of the readiness probe that failed (its Unhealthy event). */
function readinessReport(message: string, at = '2026-11-30T04:10:40Z') {
  const pod = READY.pods.find((p) => p.metadata.name === POD)!;
  return {
    metadata: { name: `${POD}.soak`, namespace: 'fediversity', uid: 'e0000000-0000-4000-8000-00000000soak', creationTimestamp: at },
    involvedObject: { kind: 'Pod', namespace: 'fediversity', name: POD, uid: pod.metadata.uid, apiVersion: 'v1', fieldPath: 'spec.containers{node}' },
    reason: 'Unhealthy',
    message,
    type: 'Warning',
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}

const held = soakHeld(READY, POD)!;

describe('judgeSoak: one snapshot of the soak', () => {
  it('GIVEN the pod that was Ready, still Ready THEN it holds', () => {
    expect(held).toMatchObject({ pod: POD, restarts: 0 });
    expect(judgeSoak(READY, held, T)).toEqual({ kind: 'holding' });
  });

  it('GIVEN readiness falls with the probe reporting systemd degraded THEN it fell, naming the failed unit', () => {
    const snap = withPod(notReady, [readinessReport('Readiness probe failed: systemd: degraded\nlate-fail.service loaded failed failed Fails 20 s after the boot')]);
    const j = judgeSoak(snap, held, T);
    expect(j).toMatchObject({ kind: 'fell', verdict: { kind: 'failed', reason: 'systemd-degraded', failedUnits: ['late-fail.service'], pod: POD } });
  });

  it('GIVEN readiness falls before the probe\'s report came THEN it waits for it, then fails without it after the grace', () => {
    const snap = withPod(notReady);
    expect(judgeSoak(snap, held, T).kind).toBe('not-ready');
    expect(judgeSoak(snap, held, T, T - 1000).kind).toBe('not-ready');
    expect(judgeSoak(snap, held, T, T - EVIDENCE_GRACE_MS)).toMatchObject({ kind: 'fell', verdict: { reason: 'readiness-lost', message: expect.stringContaining(`pod ${POD} is no longer ready`) } });
  });

  it('GIVEN the container restarted (even if Ready again) THEN it fell, with the exit code', () => {
    const snap = withPod((p) => {
      const cs = p.status.containerStatuses[0];
      cs.restartCount = 1;
      cs.lastState = { terminated: { exitCode: 137, reason: 'Error', startedAt: '2026-11-30T04:10:02Z', finishedAt: '2026-11-30T04:10:30Z' } };
    });
    expect(judgeSoak(snap, held, T)).toMatchObject({ kind: 'fell', verdict: { reason: 'container-restart', message: `the container of pod ${POD} restarted: it exited with code 137 (Error)` } });
  });

  it('GIVEN the pod was replaced by another THEN it fell, naming both pods', () => {
    const snap = withPod((p: Pod & any) => {
      p.metadata.uid = 'b0d1e2f3-0000-4000-8000-0000000000ff';
      p.metadata.name = 'web-7b9c4d6f5-new01';
    });
    expect(judgeSoak(snap, held, T)).toMatchObject({ kind: 'fell', verdict: { reason: 'pod-replaced', message: `pod ${POD} was replaced (the node's pod is now web-7b9c4d6f5-new01)` } });
  });

  it('GIVEN the pod is being deleted THEN it fell', () => {
    const snap = withPod((p) => (p.metadata.deletionTimestamp = '2026-11-30T04:10:50Z'));
    expect(judgeSoak(snap, held, T)).toMatchObject({ kind: 'fell', verdict: { reason: 'pod-replaced', message: `pod ${POD} was deleted` } });
  });
});

const ready = { kind: 'verdict' as const, verdict: { kind: 'ready' as const, pod: POD, image: null }, snapshot: READY, at: Date.now() };

describe('watchSoak: the soak over time', () => {
  it('GIVEN a pod that stays running THEN ready at the end of the soak, not before, and it said how long it held', async () => {
    const { watch } = settableWatch(READY);
    const heldFor: number[] = [];
    const t = Date.now();
    const r = await watchSoak(watch, ready, { soak: durationOf(1), signal: new AbortController().signal, onHolding: (ms) => heldFor.push(ms) });
    expect(Date.now() - t).toBeGreaterThanOrEqual(1000);
    expect(r).toMatchObject({ kind: 'verdict', verdict: { kind: 'ready', pod: POD } });
    expect(heldFor.length).toBeGreaterThan(0);
    expect(Math.max(...heldFor)).toBeLessThanOrEqual(1000);
  });

  it('GIVEN readiness falls during the soak THEN a failure at once, its message saying it fell during the soak', async () => {
    const { watch, set } = settableWatch(READY);
    const p = watchSoak(watch, ready, { soak: durationOf(60), signal: new AbortController().signal });
    setTimeout(() => set(withPod(notReady, [readinessReport('Readiness probe failed: systemd: degraded\nlate-fail.service loaded failed failed x')])), 50);
    const t = Date.now();
    const r = await p;
    expect(Date.now() - t).toBeLessThan(1000);
    expect(r.kind === 'verdict' && r.verdict).toMatchObject({ kind: 'failed', reason: 'systemd-degraded', failedUnits: ['late-fail.service'], message: expect.stringMatching(/ during the 60s soak, 0s after it was ready$/) });
  });

  it('GIVEN an interrupt during the soak THEN interrupted, with the snapshot of the node as it is', async () => {
    const { watch } = settableWatch(READY);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('SIGINT')), 100);
    const r = await watchSoak(watch, ready, { soak: durationOf(60), signal: ac.signal });
    expect(r.kind).toBe('interrupted');
    expect(r.snapshot).toBe(READY);
  });
});

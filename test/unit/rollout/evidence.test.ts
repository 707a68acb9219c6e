import { describe, expect, it } from 'vitest';
import { collectEvents, describeCurrentPod } from '../../../src/rollout/evidence.js';
import { loadFixture } from './load-fixture.js';

describe('evidence', () => {
  it('collects the events of the Deployment, its ReplicaSets, pod and claim, oldest first', () => {
    const fx = loadFixture('terminal-unschedulable-no-storage-class');
    const events = collectEvents(fx.snapshot);
    expect(events.map((e) => `${e.object} ${e.reason}`)).toEqual([
      'Deployment/web ScalingReplicaSet',
      'ReplicaSet/web-7b9c4d6f5 SuccessfulCreate',
      'PersistentVolumeClaim/web-state ProvisioningFailed',
      'Deployment/web ScalingReplicaSet',
      'Pod/web-7b9c4d6f5-x2k9p FailedScheduling',
    ]);
    // the scheduler's events.k8s.io event has only eventTime; its time is still reported
    expect(events.at(-1)!.time).toBe('2026-11-30T04:10:00.123Z');
    expect(events[2]!.count).toBe(4);
  });

  it('leaves out events of other objects and keeps the probe output lines', () => {
    const fx = loadFixture('terminal-systemd-degraded');
    const other = { ...fx.snapshot.events[0]!, involvedObject: { kind: 'Pod', name: 'db-1', uid: 'other-uid', namespace: 'fediversity' } };
    const events = collectEvents({ ...fx.snapshot, events: [...fx.snapshot.events, other] });
    expect(events.some((e) => e.object === 'Pod/db-1')).toBe(false);
    expect(events.at(-1)!.message).toBe('Readiness probe failed: systemd: degraded\nbroken.service loaded failed failed Always fails (test unit)');
  });

  it('describes the container state and the systemd state the probes saw', () => {
    expect(describeCurrentPod(loadFixture('terminal-systemd-degraded').snapshot)).toEqual({
      pod: 'web-7b9c4d6f5-x2k9p',
      phase: 'Running',
      ready: false,
      container: 'running',
      restartCount: 0,
      lastTerminated: null,
      systemdState: 'degraded',
    });
    expect(describeCurrentPod(loadFixture('terminal-crash-loop').snapshot)).toMatchObject({
      container: 'waiting: CrashLoopBackOff',
      restartCount: 1,
      lastTerminated: { exitCode: 255, reason: 'Error', finishedAt: '2026-11-30T04:10:02Z' },
    });
  });
});

/**
 * The evidence of a failed (or finished) rollout, taken from the snapshot before a rollback
 * replaces the pod: recent events of the Deployment, its ReplicaSets, the pod and its claims,
 * and the container's state. Pure; the log tail is read separately (src/kube/kube-api.ts).
 */
import { CONTAINER_NAME } from '../contract/node-container.js';
import { eventCount, eventTimeMs, type ContainerState, type KubeEvent, type Pod } from '../kube/api-objects.js';
import { parseProbeMessage } from './classify/probe-output.js';
import type { LastState, ReportedEvent } from './report.js';
import { currentPod, currentReplicaSet, ownedReplicaSets, type RolloutSnapshot } from './snapshot.js';

const MAX_EVENTS = 15;
const MAX_MESSAGE_LINES = 12;

/** Events about this node's objects, oldest first, at most 15, each message at most 12 lines. */
export function collectEvents(snap: RolloutSnapshot, sinceMs = 0): ReportedEvent[] {
  const uids = new Set<string>();
  const names = new Set<string>();
  const dep = snap.deployment;
  if (dep) {
    uids.add(dep.metadata.uid);
    names.add(`Deployment/${dep.metadata.name}`);
  }
  const rss = ownedReplicaSets(snap);
  for (const rs of rss) uids.add(rs.metadata.uid);
  const rsUids = new Set(rss.map((rs) => rs.metadata.uid));
  const claimNames = new Set<string>();
  for (const p of snap.pods) {
    if (p.metadata.ownerReferences?.some((o) => rsUids.has(o.uid))) {
      uids.add(p.metadata.uid);
      for (const v of p.spec.volumes ?? []) if (v.persistentVolumeClaim) claimNames.add(v.persistentVolumeClaim.claimName);
    }
  }
  for (const c of snap.claims) if (claimNames.has(c.metadata.name)) uids.add(c.metadata.uid);
  const mine = (e: KubeEvent) =>
    (e.involvedObject.uid && uids.has(e.involvedObject.uid)) || names.has(`${e.involvedObject.kind}/${e.involvedObject.name}`);
  return snap.events
    .filter((e) => mine(e) && !(eventTimeMs(e) < sinceMs))
    .sort((a, b) => eventTimeMs(a) - eventTimeMs(b))
    .slice(-MAX_EVENTS)
    .map(toReportedEvent);
}

export function toReportedEvent(e: KubeEvent): ReportedEvent {
  const t = eventTimeMs(e);
  return {
    time: Number.isFinite(t) ? new Date(t).toISOString() : null,
    type: e.type ?? 'Normal',
    reason: e.reason ?? '',
    object: `${e.involvedObject.kind ?? '?'}/${e.involvedObject.name ?? '?'}`,
    count: eventCount(e),
    message: (e.message ?? '').split('\n').slice(0, MAX_MESSAGE_LINES).join('\n').trimEnd(),
  };
}

function describeState(s: ContainerState | null | undefined): string | null {
  if (!s) return null;
  if (s.waiting) return `waiting: ${s.waiting.reason ?? '?'}`;
  if (s.running) return 'running';
  if (s.terminated) return `terminated: ${s.terminated.reason ?? `exit ${s.terminated.exitCode}`}`;
  return null;
}

/** The state of a pod's `node` container, and the systemd state its probes last reported. */
export function describePod(snap: RolloutSnapshot, pod: Pod): LastState {
  const cs = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER_NAME) ?? pod.status?.containerStatuses?.[0];
  const probeEvents = snap.events
    .filter((e) => e.involvedObject.uid === pod.metadata.uid && e.reason === 'Unhealthy')
    .sort((a, b) => eventTimeMs(a) - eventTimeMs(b));
  const systemd = probeEvents.map((e) => parseProbeMessage(e.message)?.systemdState).filter((s) => s !== undefined).at(-1);
  const t = cs?.lastState?.terminated ?? cs?.state?.terminated;
  return {
    pod: pod.metadata.name,
    phase: pod.status?.phase ?? null,
    ready: cs?.ready ?? false,
    container: describeState(cs?.state),
    restartCount: cs?.restartCount ?? 0,
    lastTerminated: t ? { exitCode: t.exitCode, reason: t.reason ?? null, finishedAt: t.finishedAt ?? null } : null,
    systemdState: cs?.ready ? 'running' : (systemd ?? null),
  };
}

/** The last state of the current revision's pod, or null when it has none (yet). */
export function describeCurrentPod(snap: RolloutSnapshot): LastState | null {
  const rs = currentReplicaSet(snap);
  const pod = rs ? currentPod(snap, rs) : undefined;
  return pod ? describePod(snap, pod) : null;
}

/** The failing pod's state (the one the verdict names, else the current revision's). */
export function describeFailedPod(snap: RolloutSnapshot, podName: string | undefined): LastState | null {
  const pod = podName ? snap.pods.find((p) => p.metadata.name === podName) : undefined;
  return pod ? describePod(snap, pod) : describeCurrentPod(snap);
}

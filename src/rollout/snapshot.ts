/**
 * What the watch knows about one node's rollout at one instant, and the revision arithmetic
 * of the Deployment controller: which ReplicaSet is current, which is the previous one, which
 * pods belong to which.
 */
import type { Claim, Deployment, KubeEvent, Pod, ReplicaSet } from '../kube/api-objects.js';

export interface RolloutSnapshot {
  readonly deployment: Deployment | undefined;
  readonly replicaSets: readonly ReplicaSet[];
  readonly pods: readonly Pod[];
  readonly events: readonly KubeEvent[];
  readonly claims: readonly Claim[];
}

/** The annotation the Deployment controller numbers revisions with (kubectl rollout history). */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** The label that ties a ReplicaSet's pods to its template. */
export const TEMPLATE_HASH_LABEL = 'pod-template-hash';

export function revisionOf(obj: { metadata: { annotations?: Record<string, string> | null } }): number {
  const v = Number(obj.metadata.annotations?.[REVISION_ANNOTATION]);
  return Number.isFinite(v) ? v : 0;
}

function isOwnedBy(obj: { metadata: { ownerReferences?: readonly { uid: string }[] | null } }, uid: string): boolean {
  return obj.metadata.ownerReferences?.some((o) => o.uid === uid) ?? false;
}

/** The Deployment's ReplicaSets, newest revision first. */
export function ownedReplicaSets(snap: RolloutSnapshot): ReplicaSet[] {
  const dep = snap.deployment;
  if (!dep) return [];
  return snap.replicaSets
    .filter((rs) => isOwnedBy(rs, dep.metadata.uid))
    .sort((a, b) => revisionOf(b) - revisionOf(a));
}

/**
 * The ReplicaSet of the Deployment's current template: the one whose template equals the
 * Deployment's but for the pod-template-hash label (the controller's own test,
 * EqualIgnoreHash). Until the controller made it there is none: the Deployment controller
 * already reports the new generation as observed while Recreate waits for the old pod.
 */
export function currentReplicaSet(snap: RolloutSnapshot): ReplicaSet | undefined {
  const dep = snap.deployment;
  if (!dep) return undefined;
  return ownedReplicaSets(snap).find((rs) => sameTemplateIgnoringHash(rs.spec.template, dep.spec.template));
}

/**
 * The revision before the current one: what `kubectl rollout undo` sets back (the highest
 * revision among the others; the controller gives the current one max+1, also on undo).
 */
export function previousReplicaSet(snap: RolloutSnapshot): ReplicaSet | undefined {
  const dep = snap.deployment;
  if (!dep) return undefined;
  return ownedReplicaSets(snap).find((rs) => !sameTemplateIgnoringHash(rs.spec.template, dep.spec.template));
}

export function sameTemplateIgnoringHash(a: unknown, b: unknown): boolean {
  return deepEqual(withoutHash(a), withoutHash(b));
}

function withoutHash(template: unknown): unknown {
  const t = template as { metadata?: { labels?: Record<string, string> } } | null | undefined;
  if (!t?.metadata?.labels || !(TEMPLATE_HASH_LABEL in t.metadata.labels)) return template;
  const { [TEMPLATE_HASH_LABEL]: _hash, ...labels } = t.metadata.labels;
  return { ...t, metadata: { ...t.metadata, labels } };
}

/** Structural equality of JSON values (key order does not matter). */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function podsOf(snap: RolloutSnapshot, rs: ReplicaSet): Pod[] {
  return snap.pods.filter((p) => isOwnedBy(p, rs.metadata.uid));
}

/** Pods of the Deployment's other ReplicaSets that still exist (Recreate: must be gone). */
export function oldPods(snap: RolloutSnapshot, current: ReplicaSet): Pod[] {
  const others = new Set(ownedReplicaSets(snap).filter((rs) => rs !== current).map((rs) => rs.metadata.uid));
  return snap.pods.filter(
    (p) =>
      p.metadata.ownerReferences?.some((o) => others.has(o.uid)) &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed',
  );
}

/** The pod that speaks for the current revision: the newest one not being deleted. */
export function currentPod(snap: RolloutSnapshot, rs: ReplicaSet): Pod | undefined {
  const pods = podsOf(snap, rs).sort(
    (a, b) => Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? ''),
  );
  return pods.find((p) => !p.metadata.deletionTimestamp) ?? pods[0];
}

/** Events about one object (by uid, or by kind+name when the recorder left the uid out). */
export function eventsFor(snap: RolloutSnapshot, kind: string, meta: { name: string; uid: string }): KubeEvent[] {
  return snap.events.filter((e) =>
    e.involvedObject.uid ? e.involvedObject.uid === meta.uid : e.involvedObject.kind === kind && e.involvedObject.name === meta.name,
  );
}

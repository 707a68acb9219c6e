/**
 * The classifier: from one snapshot of the API objects, is the rollout done, still on its way
 * (slow: keep waiting until the deadline), or failed for good (terminal: fail now, roll back)?
 * Pure: the clock comes in as `now`. Every terminal reason is one the kubelet, scheduler or
 * controller does not get out of by itself without a change to the Deployment.
 */
import { findCondition, templateImage, type Deployment } from '../../kube/api-objects.js';
import { LABEL_NAME } from '../../contract/pod-labels.js';
import { classifyPod } from './classify-pod.js';
import { currentPod, currentReplicaSet, oldPods, type RolloutSnapshot } from '../snapshot.js';
import { type ClassifyContext, type Verdict, waiting } from './verdict.js';

// rollback.ts, run-rollout.ts and wait-for-verdict.ts import them from here
export type { ClassifyContext, FailureReason, SlowPhase, Verdict } from './verdict.js';

export function classifyRollout(snap: RolloutSnapshot, ctx: ClassifyContext): Verdict {
  const dep = snap.deployment;
  if (!dep) {
    return { kind: 'failed', reason: 'deployment-missing', message: 'the Deployment does not exist (deleted during the rollout?)', failedUnits: [] };
  }
  const generation = dep.metadata.generation ?? 0;
  if (ctx.minGeneration !== undefined && generation < ctx.minGeneration) {
    return waiting('controller', `waiting for the Deployment to show generation ${ctx.minGeneration}`);
  }
  if ((dep.status?.observedGeneration ?? 0) < generation) {
    return waiting('controller', `waiting for the Deployment controller to observe generation ${generation}`);
  }
  const pod = classifyRevision(snap, dep, ctx);
  const deadline = ctx.ignoreProgressDeadline ? undefined : progressDeadlinePassed(dep, ctx);
  // The pod's own verdict is the more precise one: a terminal failure names its cause, and a
  // pod that is ready is ready. A pod still on its way is what the deadline cut short: say
  // what it was still waiting for.
  if (!deadline || pod.kind !== 'waiting') return pod;
  return {
    ...deadline,
    message: `${deadline.message}; still ${pod.phase}: ${pod.detail}`,
    ...(pod.pod ? { pod: pod.pod } : {}),
    ...(pod.systemdState ? { systemdState: pod.systemdState } : {}),
  };
}

/**
 * The Deployment controller's ProgressDeadlineExceeded, when it was set during this wait: the
 * controller keeps a stale one for a new generation until the new ReplicaSet exists (Recreate
 * waits for the old pod first). Condition times have whole seconds.
 */
function progressDeadlinePassed(dep: Deployment, ctx: ClassifyContext): Extract<Verdict, { kind: 'failed' }> | undefined {
  const progressing = findCondition(dep.status?.conditions, 'Progressing');
  const progressingAt = Date.parse(progressing?.lastUpdateTime ?? progressing?.lastTransitionTime ?? '');
  if (progressing?.status !== 'False' || progressing.reason !== 'ProgressDeadlineExceeded' || progressingAt < ctx.watchStartedAt - 1000) return undefined;
  return {
    kind: 'failed',
    reason: 'progress-deadline',
    message: `the Deployment's progress deadline (${dep.spec.progressDeadlineSeconds ?? '?'}s) passed: ${progressing.message ?? ''}`.trim(),
    failedUnits: [],
    ...(Number.isFinite(progressingAt) ? { evidenceAt: progressingAt } : {}),
  };
}

/** The verdict on the Deployment's current revision: its ReplicaSet, the old pods, its pod. */
function classifyRevision(snap: RolloutSnapshot, dep: Deployment, ctx: ClassifyContext): Verdict {
  const rs = currentReplicaSet(snap);
  if (!rs) {
    // Recreate: the controller makes the new ReplicaSet only once the old pods are gone.
    const stopping = snap.pods.filter((p) => p.metadata.deletionTimestamp && p.metadata.labels?.[LABEL_NAME] === dep.metadata.name);
    if (stopping.length > 0) return waiting('old-pod', `waiting for the previous pod ${stopping.map((p) => p.metadata.name).join(', ')} to stop`);
    return waiting('controller', 'waiting for the Deployment controller to create the ReplicaSet of the new template');
  }
  const old = oldPods(snap, rs);
  if (old.length > 0) return waiting('old-pod', `waiting for the previous pod ${old.map((p) => p.metadata.name).join(', ')} to stop`);
  const pod = currentPod(snap, rs);
  // A pod being deleted never speaks for the revision: it may still be Ready (its containers
  // stop at their own pace, the stop timeout) and the counts of a ReplicaSet scaled down and
  // up again can still include it. The ReplicaSet makes a new pod; wait for that one. (A
  // Deployment scaled to 0 by hand and back by the ownership step: the step must not report
  // Ready off the stopping pod.)
  if (!pod || pod.metadata.deletionTimestamp) {
    const failure = findCondition(rs.status?.conditions, 'ReplicaFailure');
    // The API server's admission refuses the pod (Pod Security Admission, a webhook): the
    // controller retries for ever and nothing changes until someone changes the rule or the pod.
    if (failure?.status === 'True' && failure.reason === 'FailedCreate' && REFUSED_BY_ADMISSION.test(failure.message ?? '')) {
      const at = Date.parse(failure.lastTransitionTime ?? '');
      return {
        kind: 'failed',
        reason: 'admission',
        message: `the cluster refuses the pod (admission): ${failure.message}`,
        failedUnits: [],
        ...(Number.isFinite(at) ? { evidenceAt: at } : {}),
      };
    }
    const why = failure?.status === 'True' ? `: ${failure.message ?? failure.reason ?? ''}` : '';
    const inPlaceOf = pod ? ` in place of pod ${pod.metadata.name}, which is being deleted` : '';
    return waiting('creating-pod', `waiting for ReplicaSet ${rs.metadata.name} to create the pod${inPlaceOf}${why}`);
  }
  return classifyPod(snap, pod, ctx, () => {
    const s = dep.status;
    const counted = (s?.updatedReplicas ?? 0) >= 1 && (s?.readyReplicas ?? 0) >= 1 && (s?.availableReplicas ?? 0) >= 1;
    const noExtra = (s?.replicas ?? 0) <= (dep.spec.replicas ?? 1);
    return counted && noExtra;
  }, templateImage(rs.spec.template));
}

/** A pod refused for good by admission: PodSecurity's own words, or a validating webhook's. */
const REFUSED_BY_ADMISSION = /violates PodSecurity|admission webhook "[^"]*" denied the request/;

/**
 * The classifier: from one snapshot of the API objects, is the rollout done, still on its way
 * (slow: keep waiting until the deadline), or failed for good (terminal: fail now, roll back)?
 * Pure: the clock comes in as `now`. Every terminal reason is one the kubelet, scheduler or
 * controller does not get out of by itself without a change to the Deployment.
 */
import { eventCount, eventTimeMs, findCondition, templateImage, type Claim, type ContainerStatus, type Deployment, type KubeEvent, type Pod } from '../kube/api-objects.js';
import { CONTAINER_NAME } from '../contract/node-container.js';
import { LABEL_NAME } from '../contract/pod-labels.js';
import type { SystemdState } from '../contract/probes.js';
import { isTerminalSystemdState, parseProbeMessage } from './probe-output.js';
import { currentPod, currentReplicaSet, eventsFor, oldPods, type RolloutSnapshot } from './snapshot.js';

/** Why a rollout is still on its way. */
export type SlowPhase =
  | 'controller' // the Deployment controller has not acted on the new generation yet
  | 'old-pod' // Recreate: the previous pod is still shutting down
  | 'creating-pod' // the ReplicaSet has not created the pod yet
  | 'scheduling' // waiting for the scheduler (a claim being provisioned)
  | 'pulling' // the kubelet pulls the image
  | 'creating' // ContainerCreating: sandbox, volumes, container
  | 'booting' // systemd starting (startup probe not passed yet)
  | 'restarting' // the container exited and is being started again
  | 'readiness' // booted, readiness not reported yet
  | 'available'; // pod ready, the Deployment has not counted it yet

/** Why a rollout failed. Every one but `timeout` is decided before the deadline. */
export type FailureReason =
  | 'systemd-degraded'
  | 'systemd-maintenance'
  | 'image-pull'
  | 'container-config'
  | 'crash-loop'
  | 'unschedulable'
  | 'pod-sandbox'
  | 'admission'
  | 'progress-deadline'
  | 'deployment-missing'
  | 'timeout';

export type Verdict =
  | { readonly kind: 'ready'; readonly pod: string; readonly image: string | null }
  | {
      readonly kind: 'waiting';
      readonly phase: SlowPhase;
      readonly detail: string;
      readonly pod?: string;
      readonly systemdState?: SystemdState;
    }
  | {
      readonly kind: 'failed';
      readonly reason: FailureReason;
      readonly message: string;
      readonly failedUnits: readonly string[];
      readonly pod?: string;
      readonly systemdState?: SystemdState;
      /** When the API first showed the evidence (ms since epoch), for the benchmark. */
      readonly evidenceAt?: number;
    };

export interface ClassifyContext {
  /** Local clock, ms since the epoch. */
  readonly now: number;
  /** When this watch began (grace periods never start before it). */
  readonly watchStartedAt: number;
  /** After a rollback patch: the Deployment generation that carries it. */
  readonly minGeneration?: number;
  /**
   * Judge the pod only, not the Deployment's progress deadline: the rollback's wait. The
   * controller does not reset a ProgressDeadlineExceeded when a rollback makes an existing
   * ReplicaSet current again (it resets the condition only for a ReplicaSet it creates), and
   * with Recreate it may set it for the failed revision only after the step's own deadline,
   * while the hung pod stops: the condition then speaks of the failed revision, not of the
   * previous one coming back. The rollback's wait has its own deadline.
   */
  readonly ignoreProgressDeadline?: boolean;
  /**
   * How long an unschedulable pod may wait for a claim that a provisioner is working on
   * (Immediate binding: the scheduler says "unbound immediate PersistentVolumeClaims"
   * until the volume is there). Default 10 s.
   */
  readonly claimGraceMs?: number;
}

const IMAGE_PULL = new Set(['ImagePullBackOff', 'ErrImagePull', 'ErrImageNeverPull', 'InvalidImageName']);
const PROVISIONER_ANNOTATIONS = ['volume.kubernetes.io/storage-provisioner', 'volume.beta.kubernetes.io/storage-provisioner'];
const DEFAULT_CLAIM_GRACE_MS = 10_000;
const SANDBOX_FAILURES = 3;

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
  if (!pod) {
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
    return waiting('creating-pod', `waiting for ReplicaSet ${rs.metadata.name} to create the pod${why}`);
  }
  return classifyPod(snap, pod, ctx, () => {
    const s = dep.status;
    const counted = (s?.updatedReplicas ?? 0) >= 1 && (s?.readyReplicas ?? 0) >= 1 && (s?.availableReplicas ?? 0) >= 1;
    const noExtra = (s?.replicas ?? 0) <= (dep.spec.replicas ?? 1);
    return counted && noExtra;
  }, templateImage(rs.spec.template));
}

function classifyPod(snap: RolloutSnapshot, pod: Pod, ctx: ClassifyContext, deploymentCountsIt: () => boolean, image: string | null): Verdict {
  const name = pod.metadata.name;
  const events = eventsFor(snap, 'Pod', pod.metadata);
  const scheduled = findCondition(pod.status?.conditions, 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return classifyUnschedulable(snap, pod, scheduled.message ?? '', Date.parse(scheduled.lastTransitionTime ?? '') || ctx.watchStartedAt, ctx);
  }
  if (!scheduled || scheduled.status !== 'True') return waiting('scheduling', `pod ${name} is waiting for the scheduler`, name);

  // The kubelet retries a failed sandbox for ever (every ~10 s); three failures in a row are
  // a runtime that cannot run this pod (e.g. no handler for the RuntimeClass), not slowness.
  const sandboxFailures = events.filter((e) => e.reason === 'FailedCreatePodSandBox');
  const sandboxCount = sandboxFailures.reduce((n, e) => n + eventCount(e), 0);
  const sandboxUp = findCondition(pod.status?.conditions, 'PodReadyToStartContainers')?.status === 'True';
  if (sandboxCount >= SANDBOX_FAILURES && !sandboxUp && !nodeContainer(pod)?.state?.running) {
    const last = byTime(sandboxFailures).at(-1)!;
    return failed('pod-sandbox', `the pod sandbox failed ${sandboxCount} times: ${(last.message ?? '').split('\n')[0]}`, name, latestTime(sandboxFailures, 'FailedCreatePodSandBox'));
  }

  const cs = nodeContainer(pod);
  const readyCond = findCondition(pod.status?.conditions, 'Ready');
  if (readyCond?.status === 'True' && cs?.ready) {
    if (deploymentCountsIt()) return { kind: 'ready', pod: name, image };
    return waiting('available', `pod ${name} is ready; waiting for the Deployment to count it available`, name, 'running');
  }
  if (!cs) return waiting('creating', describeCreating(events, name), name);

  const waitingReason = cs.state?.waiting?.reason ?? '';
  const waitingMessage = cs.state?.waiting?.message ?? '';
  if (IMAGE_PULL.has(waitingReason)) {
    return failed('image-pull', `${waitingReason}: ${waitingMessage || lastMessage(events, 'Failed') || `cannot pull ${cs.image ?? image ?? 'the image'}`}`, name, latestTime(events, 'Failed'));
  }
  if (waitingReason === 'CreateContainerConfigError') {
    return failed('container-config', `CreateContainerConfigError: ${waitingMessage}`, name, latestTime(events, 'Failed'));
  }
  if (waitingReason === 'CrashLoopBackOff') {
    const t = cs.lastState?.terminated;
    const last = t ? ` (last exit: code ${t.exitCode}${t.reason ? `, ${t.reason}` : ''})` : '';
    return failed('crash-loop', `CrashLoopBackOff: the container keeps exiting, restarted ${cs.restartCount} time${cs.restartCount === 1 ? "" : "s"}${last}`, name, latestTime(events, 'BackOff'));
  }
  if (cs.state?.terminated) {
    return waiting('restarting', `the container exited with code ${cs.state.terminated.exitCode}${cs.state.terminated.reason ? ` (${cs.state.terminated.reason})` : ''}`, name);
  }
  if (!cs.state?.running) {
    const pulling = pullingMessage(events);
    if (pulling) return waiting('pulling', pulling, name);
    return waiting('creating', waitingReason ? `${waitingReason}${waitingMessage ? `: ${waitingMessage}` : ''}` : describeCreating(events, name), name);
  }

  // Running: what do the probes say about systemd (only reports of this container's run)?
  const since = Math.floor(Date.parse(cs.state.running.startedAt ?? '') / 1000) * 1000 || 0;
  const probes = events
    .filter((e) => e.reason === 'Unhealthy' && !(eventTimeMs(e) < since))
    .map((e) => ({ e, report: parseProbeMessage(e.message) }))
    .filter((x) => x.report !== undefined)
    .sort((a, b) => eventTimeMs(a.e) - eventTimeMs(b.e));
  const readiness = probes.filter((x) => x.report!.probe === 'Readiness').at(-1);
  if (readiness) {
    const r = readiness.report!;
    // The readiness probe runs only after the startup probe passed (boot is over); the count
    // covers a kubelet that does not report `started`.
    if (isTerminalSystemdState(r.systemdState) && (cs.started === true || eventCount(readiness.e) >= 2)) {
      const units = r.failedUnits;
      const what = units.length > 0 ? `failed units: ${units.join(', ')}` : 'no failed unit listed';
      return {
        kind: 'failed',
        reason: r.systemdState === 'degraded' ? 'systemd-degraded' : 'systemd-maintenance',
        message: `systemd in pod ${name} is ${r.systemdState} (${what})`,
        failedUnits: units,
        pod: name,
        systemdState: r.systemdState,
        evidenceAt: Date.parse(readiness.e.firstTimestamp ?? readiness.e.eventTime ?? '') || eventTimeMs(readiness.e),
      };
    }
  }
  const latest = probes.at(-1)?.report;
  const state = latest?.systemdState;
  if (cs.started !== true) {
    return waiting('booting', `systemd is booting${state ? ` (systemd: ${state})` : ''}`, name, state);
  }
  return waiting('readiness', `booted; waiting for readiness${state ? ` (systemd: ${state})` : ''}`, name, state);
}

function classifyUnschedulable(snap: RolloutSnapshot, pod: Pod, schedulerMessage: string, since: number, ctx: ClassifyContext): Verdict {
  const name = pod.metadata.name;
  const claimNames = (pod.spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
  const notes: string[] = [];
  let provisioning = false;
  let provisioningFailed = false;
  for (const claimName of claimNames) {
    const claim = snap.claims.find((c) => c.metadata.name === claimName);
    if (!claim) {
      notes.push(`claim ${claimName} does not exist`);
      continue;
    }
    if (claim.status?.phase === 'Bound') continue;
    const atWork = PROVISIONER_ANNOTATIONS.some((a) => claim.metadata.annotations?.[a]);
    if (claim.status?.phase === 'Pending' && atWork) provisioning = true;
    if (eventsFor(snap, 'PersistentVolumeClaim', claim.metadata).some((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed')) provisioningFailed = true;
    notes.push(describeClaim(snap, claim, atWork));
  }
  // A provisioner at work that has not said it failed is slow, not terminal: with many
  // claims at once (a fleet's first deploy) provisioning takes longer than any fixed grace.
  // Once it reports ProvisioningFailed, the grace is all it gets.
  const grace = ctx.claimGraceMs ?? DEFAULT_CLAIM_GRACE_MS;
  const start = Math.max(since, ctx.watchStartedAt);
  if (provisioning && (!provisioningFailed || ctx.now - start < grace)) {
    return waiting('scheduling', `pod ${name} waits for its claim to be provisioned (${notes.join('; ')})`, name);
  }
  const message = [`pod ${name} cannot be scheduled: ${schedulerMessage}`.trim(), ...notes].join('; ');
  return failed('unschedulable', message, name, since);
}

function describeClaim(snap: RolloutSnapshot, claim: Claim, atWork: boolean): string {
  const cls = claim.spec?.storageClassName;
  const why = lastWarning(eventsFor(snap, 'PersistentVolumeClaim', claim.metadata));
  return (
    `claim ${claim.metadata.name} is ${claim.status?.phase ?? 'unknown'}` +
    (cls ? ` (storage class "${cls}")` : ' (no storage class)') +
    (atWork ? ', a provisioner is at work' : ', no provisioner is at work') +
    (why ? `: ${why}` : '')
  );
}

function nodeContainer(pod: Pod): ContainerStatus | undefined {
  const all = pod.status?.containerStatuses ?? [];
  return all.find((c) => c.name === CONTAINER_NAME) ?? all[0];
}

/** A pod refused for good by admission: PodSecurity's own words, or a validating webhook's. */
const REFUSED_BY_ADMISSION = /violates PodSecurity|admission webhook "[^"]*" denied the request/;

function waiting(phase: SlowPhase, detail: string, pod?: string, systemdState?: SystemdState): Verdict {
  return { kind: 'waiting', phase, detail, ...(pod ? { pod } : {}), ...(systemdState ? { systemdState } : {}) };
}

function failed(reason: FailureReason, message: string, pod: string, evidenceAt: number | undefined): Verdict {
  return { kind: 'failed', reason, message, failedUnits: [], pod, ...(evidenceAt && Number.isFinite(evidenceAt) ? { evidenceAt } : {}) };
}

function byTime(events: readonly KubeEvent[]): KubeEvent[] {
  return [...events].sort((a, b) => eventTimeMs(a) - eventTimeMs(b));
}

function lastMessage(events: readonly KubeEvent[], reason: string): string | undefined {
  return byTime(events.filter((e) => e.reason === reason)).at(-1)?.message ?? undefined;
}

function latestTime(events: readonly KubeEvent[], reason: string): number | undefined {
  const e = byTime(events.filter((x) => x.reason === reason)).at(-1);
  return e ? Date.parse(e.firstTimestamp ?? e.eventTime ?? '') || eventTimeMs(e) : undefined;
}

function lastWarning(events: readonly KubeEvent[]): string | undefined {
  return byTime(events.filter((e) => e.type === 'Warning')).at(-1)?.message ?? undefined;
}

/** "Pulling" with no "Pulled"/"Failed" after it: the kubelet is pulling. */
function pullingMessage(events: readonly KubeEvent[]): string | undefined {
  const pullEvents = byTime(events.filter((e) => e.reason === 'Pulling' || e.reason === 'Pulled' || e.reason === 'Failed'));
  const last = pullEvents.at(-1);
  return last?.reason === 'Pulling' ? (last.message ?? 'pulling the image') : undefined;
}

function describeCreating(events: readonly KubeEvent[], pod: string): string {
  const pulling = pullingMessage(events);
  if (pulling) return pulling;
  const warn = lastWarning(events);
  return warn ? `creating pod ${pod} (last warning: ${warn.split('\n')[0]})` : `creating pod ${pod}`;
}

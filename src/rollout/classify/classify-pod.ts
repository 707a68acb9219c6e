/**
 * The classifier's verdict on one pod (classify.ts judges the Deployment and its revision,
 * then hands the current pod here): the scheduler, the sandbox, the container's state, the
 * probes' report of systemd, and an unschedulable pod's claims.
 */
import { eventCount, eventTimeMs, findCondition, type Claim, type ContainerStatus, type KubeEvent, type Pod } from '../../kube/api-objects.js';
import { CONTAINER_NAME } from '../../contract/node-container.js';
import { byTime, describeCreating, lastMessage, lastWarning, latestTime, pullingMessage } from './pod-events.js';
import { isTerminalSystemdState, parseProbeMessage } from './probe-output.js';
import { eventsFor, type RolloutSnapshot } from '../snapshot.js';
import { type ClassifyContext, failed, type Verdict, waiting } from './verdict.js';

const IMAGE_PULL = new Set(['ImagePullBackOff', 'ErrImagePull', 'ErrImageNeverPull', 'InvalidImageName']);
const PROVISIONER_ANNOTATIONS = ['volume.kubernetes.io/storage-provisioner', 'volume.beta.kubernetes.io/storage-provisioner'];
const DEFAULT_CLAIM_GRACE_MS = 10_000;
/** The scheduler's words (its VolumeBinding plugin) when a pod's claims were not bound at its last try. */
const UNBOUND_CLAIMS = /unbound immediate PersistentVolumeClaims/i;
const SANDBOX_FAILURES = 3;

/**
 * The verdict on the current revision's pod: scheduled, its sandbox, its container's state
 * and, once it runs, what the probes say of systemd. `deploymentCountsIt`: the Deployment
 * counts the pod available (ready alone is not done).
 */
export function classifyPod(snap: RolloutSnapshot, pod: Pod, ctx: ClassifyContext, deploymentCountsIt: () => boolean, image: string | null): Verdict {
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
  let notTakenUp = false;
  const bound: string[] = [];
  for (const claimName of claimNames) {
    const claim = snap.claims.find((c) => c.metadata.name === claimName);
    if (!claim) {
      notes.push(`claim ${claimName} does not exist`);
      continue;
    }
    if (claim.status?.phase === 'Bound') {
      bound.push(claimName);
      continue;
    }
    const atWork = PROVISIONER_ANNOTATIONS.some((a) => claim.metadata.annotations?.[a]);
    const events = eventsFor(snap, 'PersistentVolumeClaim', claim.metadata);
    if (claim.status?.phase === 'Pending' && atWork) provisioning = true;
    // Pending, no provisioner named on it and not one event: the volume controller has not
    // taken it up yet (it works through a fleet's claims one by one: seen with 200 claims
    // made at once, their pods judged "no provisioner is at work" before it got to them)
    const untouched = claim.status?.phase === 'Pending' && !atWork && events.length === 0;
    if (untouched) notTakenUp = true;
    if (events.some((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed')) provisioningFailed = true;
    notes.push(untouched ? `claim ${claim.metadata.name} is Pending, not yet taken up by the volume controller` : describeClaim(claim, atWork, events));
  }
  // A provisioner at work that has not said it failed is slow, not terminal: with many
  // claims at once (a fleet's first deploy) provisioning takes longer than any fixed grace.
  // So is a claim the volume controller has not taken up yet. The rollout's deadline bounds both.
  // Once it reports ProvisioningFailed, the grace is all it gets.
  const grace = ctx.claimGraceMs ?? DEFAULT_CLAIM_GRACE_MS;
  const start = Math.max(since, ctx.watchStartedAt);
  if ((provisioning || notTakenUp) && (!provisioningFailed || ctx.now - start < grace)) {
    return waiting('scheduling', `pod ${name} waits for its claim to be provisioned (${notes.join('; ')})`, name);
  }
  // Every claim is bound now, and the scheduler's condition still speaks of unbound ones: it
  // was written at its last try, before the volume came. The scheduler tries again once it
  // sees the claim bound (its queue moves the pod on the claim's update, after a backoff of up
  // to 10 s, longer on a loaded host): slow, not terminal. Seen on a 200-node group's first
  // apply (waves of 10): a pod judged unschedulable 2 s before it was scheduled. The rollout's
  // deadline bounds the wait; another reason of the scheduler's fails as before.
  if (claimNames.length > 0 && bound.length === claimNames.length && UNBOUND_CLAIMS.test(schedulerMessage)) {
    const which = bound.length === 1 ? `its claim ${bound[0]} is` : `its claims ${bound.join(', ')} are`;
    return waiting('scheduling', `pod ${name} waits for the scheduler to try again: ${which} bound now (at its last try it was not)`, name);
  }
  const message = [`pod ${name} cannot be scheduled: ${schedulerMessage}`.trim(), ...notes].join('; ');
  return failed('unschedulable', message, name, since);
}

/** A claim not bound, in words: its phase, storage class, whether a provisioner works on it, and its last warning (`events`: the claim's). */
function describeClaim(claim: Claim, atWork: boolean, events: readonly KubeEvent[]): string {
  const cls = claim.spec?.storageClassName;
  const why = lastWarning(events);
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

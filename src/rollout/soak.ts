/**
 * The soak (--soak, DEPLOY_SOAK): once a node's new pod is Ready, its rollout step keeps
 * watching that pod for the soak before it exits 0, and so before tofu starts the next wave
 * (whose Deployments depend on this step). A node can reach `running` and fall a little later
 * (a unit that fails after its start, a timer, a service that dies at its first load): the
 * soak turns that fall into a failed rollout, rolled back with its evidence like any other.
 *
 * Holding means three things of the pod that was Ready: it stays Ready (its readiness probe
 * reports systemd `running`), its container does not restart, and it is still the node's pod
 * (not deleted or replaced). The judgement of one snapshot is pure (judgeSoak); watchSoak
 * runs it on every change of the watch until the soak is over, the pod falls, or the signal
 * aborts, and answers as the rollout's own wait does (a WaitResult), so that run-rollout.ts
 * treats a fall exactly as a failure before Ready.
 */
import { CONTAINER_NAME } from '../contract/node-container.js';
import type { Duration } from '../config/duration.js';
import { findCondition, type Pod } from '../kube/api-objects.js';
import { classifyPod } from './classify/classify-pod.js';
import type { FailureReason, Verdict } from './classify/classify.js';
import type { RolloutWatch } from './rollout-watch.js';
import { currentPod, currentReplicaSet, type RolloutSnapshot } from './snapshot.js';
import { evaluateUntil, type WaitResult } from './wait-for-verdict.js';

/** The pod the soak holds to, as it was when it became Ready. */
export interface SoakHeld {
  readonly pod: string;
  readonly uid: string;
  readonly restarts: number;
}

type Failed = Extract<Verdict, { kind: 'failed' }>;

export type SoakJudgement =
  | { readonly kind: 'holding' }
  /** Not Ready, and the probe's report of why not has not come yet (see EVIDENCE_GRACE_MS). */
  | { readonly kind: 'not-ready'; readonly detail: string }
  | { readonly kind: 'fell'; readonly verdict: Failed };

/**
 * How long a pod that is no longer Ready may wait for its readiness probe's report (the
 * kubelet's Unhealthy event, which names systemd's state and the failed units) before the soak
 * fails without it: the pod's status and the event are separate writes of the kubelet, and
 * the report is the evidence worth a few seconds.
 */
export const EVIDENCE_GRACE_MS = 5_000;

/** The Ready pod of the verdict, as the snapshot has it (undefined when it is gone already). */
export function soakHeld(snap: RolloutSnapshot, podName: string): SoakHeld | undefined {
  const pod = snap.pods.find((p) => p.metadata.name === podName);
  if (!pod) return undefined;
  return { pod: podName, uid: pod.metadata.uid, restarts: nodeContainer(pod)?.restartCount ?? 0 };
}

/**
 * One snapshot during the soak: holding, not Ready (waiting for the probe's report, since
 * `notReadySince`), or fallen, with the verdict of the failure. `now`: the clock.
 */
export function judgeSoak(snap: RolloutSnapshot, held: SoakHeld, now: number, notReadySince?: number): SoakJudgement {
  const fell = (reason: FailureReason, message: string, more: Partial<Failed> = {}): SoakJudgement => ({
    kind: 'fell',
    verdict: { kind: 'failed', reason, message, failedUnits: [], pod: held.pod, ...more },
  });
  const dep = snap.deployment;
  if (!dep) return fell('deployment-missing', 'the Deployment was deleted');
  const pod = snap.pods.find((p) => p.metadata.uid === held.uid);
  if (!pod || pod.metadata.deletionTimestamp) {
    const rs = currentReplicaSet(snap);
    const replacement = rs ? currentPod(snap, rs) : undefined;
    const other = replacement && replacement.metadata.uid !== held.uid ? ` (the node's pod is now ${replacement.metadata.name})` : '';
    return fell('pod-replaced', `pod ${held.pod} was ${pod ? 'deleted' : 'replaced'}${other}`);
  }
  const cs = nodeContainer(pod);
  if (cs && cs.restartCount > held.restarts) {
    const t = cs.lastState?.terminated;
    const exit = t ? `: it exited with code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}` : '';
    return fell('container-restart', `the container of pod ${held.pod} restarted${exit}`);
  }
  if (findCondition(pod.status?.conditions, 'Ready')?.status === 'True' && cs?.ready) return { kind: 'holding' };
  // not Ready: the classifier reads the probes' report of systemd (degraded, and which units)
  const v = classifyPod(snap, pod, { now, watchStartedAt: now }, () => true, cs?.image ?? null);
  if (v.kind === 'failed') return { kind: 'fell', verdict: v };
  const detail = v.kind === 'waiting' ? v.detail : 'not ready';
  if (notReadySince === undefined || now - notReadySince < EVIDENCE_GRACE_MS) return { kind: 'not-ready', detail };
  return fell('readiness-lost', `pod ${held.pod} is no longer ready: ${detail}`, v.kind === 'waiting' && v.systemdState ? { systemdState: v.systemdState } : {});
}

export interface SoakOptions {
  readonly soak: Duration;
  readonly signal: AbortSignal;
  readonly now?: () => number;
  /** Every evaluation while the pod holds, with how long it has held, for the progress line. */
  readonly onHolding?: (heldMs: number) => void;
}

/**
 * Watches the Ready pod of `ready` for the soak. Answers `ready` (the same verdict, at the
 * soak's end), a failure whose message says when in the soak it fell, or `interrupted`.
 */
export function watchSoak(watch: RolloutWatch, ready: Extract<WaitResult, { kind: 'verdict' }> & { verdict: { kind: 'ready' } }, opts: SoakOptions): Promise<WaitResult> {
  const now = opts.now ?? Date.now;
  const start = now();
  const words = `during the ${opts.soak.text} soak`;
  const held = soakHeld(ready.snapshot, ready.verdict.pod);
  let notReadySince: number | undefined;
  let last: Verdict = ready.verdict;
  return evaluateUntil<WaitResult>(watch, opts.signal, () => {
    const snapshot = watch.snapshot();
    const t = now();
    if (opts.signal.aborted) return { kind: 'interrupted', last, snapshot, at: t };
    const j: SoakJudgement = held ? judgeSoak(snapshot, held, t, notReadySince) : { kind: 'fell', verdict: { kind: 'failed', reason: 'pod-replaced', message: `pod ${ready.verdict.pod} was gone as soon as it was ready`, failedUnits: [], pod: ready.verdict.pod } };
    const heldMs = t - start;
    if (j.kind === 'fell') {
      last = j.verdict;
      return { kind: 'verdict', verdict: { ...j.verdict, message: `${j.verdict.message} ${words}, ${Math.floor(heldMs / 1000)}s after it was ready` }, snapshot, at: t };
    }
    if (j.kind === 'not-ready') notReadySince ??= t;
    else notReadySince = undefined;
    if (heldMs >= opts.soak.ms && j.kind === 'holding') return { ...ready, snapshot, at: t };
    opts.onHolding?.(Math.min(heldMs, opts.soak.ms));
    return undefined;
  });
}

function nodeContainer(pod: Pod) {
  const all = pod.status?.containerStatuses ?? [];
  return all.find((c) => c.name === CONTAINER_NAME) ?? all[0];
}

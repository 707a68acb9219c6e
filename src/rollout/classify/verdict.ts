/**
 * What the classifier (classify.ts) says of a rollout, and the context it judges in: done,
 * still on its way (and why), or failed for good (and why).
 */
import type { SystemdState } from '../../contract/probes.js';

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
  | 'timeout'
  // during the soak (rollout/soak.ts), after the pod was Ready
  | 'readiness-lost'
  | 'container-restart'
  | 'pod-replaced';

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

/** A rollout still on its way. */
export function waiting(phase: SlowPhase, detail: string, pod?: string, systemdState?: SystemdState): Verdict {
  return { kind: 'waiting', phase, detail, ...(pod ? { pod } : {}), ...(systemdState ? { systemdState } : {}) };
}

/** A rollout failed for good, with the time the evidence was first seen. */
export function failed(reason: FailureReason, message: string, pod: string, evidenceAt: number | undefined): Verdict {
  return { kind: 'failed', reason, message, failedUnits: [], pod, ...(evidenceAt && Number.isFinite(evidenceAt) ? { evidenceAt } : {}) };
}

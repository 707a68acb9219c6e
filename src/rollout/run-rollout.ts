/**
 * The rollout step of one node: watch until the new revision's pod is ready, or fail fast on
 * a terminal reason; collect the evidence; set the Deployment back to the previous revision
 * (`kubectl rollout undo` semantics) and wait, bounded, for that pod; report.
 * Dependencies come in as arguments (the API, the clock, the signal, the progress sink).
 */
import { CONTAINER_NAME } from '../contract/node-container.js';
import { ROLLBACK_FIELD_MANAGER } from '../contract/field-managers.js';
import { ToolError } from '../errors.js';
import type { Logger } from '../log.js';
import { createBootQueueReader } from './boot-queue.js';
import { DeploymentSchema, templateImage, type Deployment } from './api-objects.js';
import type { Verdict } from './classify.js';
import { collectEvents, describeCurrentPod, describePod } from './evidence.js';
import { apiToolError, describeApiError, type KubeApi } from './kube-api.js';
import type { Progress, RolloutStage } from './progress.js';
import type { LastState, RolloutOutcome, RolloutReport } from './report.js';
import { openRolloutWatch, type RolloutWatch } from './rollout-watch.js';
import { currentPod, currentReplicaSet, previousReplicaSet, revisionOf, type RolloutSnapshot } from './snapshot.js';
import { describeJobs } from './systemd-jobs.js';
import { buildUndoPatch } from './undo-patch.js';
import { waitForVerdict, type WaitResult } from './wait-for-verdict.js';

export interface RolloutOptions {
  readonly namespace: string;
  readonly node: string;
  /** How long the new revision may take to become ready. */
  readonly timeoutMs: number;
  /** How long the previous revision may take to become ready again after the rollback. */
  readonly rollbackTimeoutMs: number;
  /** Grace for an unschedulable pod whose claim a provisioner is working on. */
  readonly claimGraceMs?: number;
}

export interface RolloutDeps {
  readonly api: KubeApi;
  readonly signal: AbortSignal;
  readonly progress?: Progress;
  readonly logger?: Logger;
  readonly now?: () => number;
}

const LOG_LINES = 20;
/** The journal read of a degraded pod may delay the rollback this long at most. */
const JOURNAL_MS = 3_000;
/** Events this long before the step began still belong to its rollout (the apply's own). */
const EVENTS_BEFORE_START_MS = 10_000;

export async function runRollout(opts: RolloutOptions, deps: RolloutDeps): Promise<RolloutReport> {
  const now = deps.now ?? Date.now;
  const { api, signal, logger } = deps;
  const { namespace, node } = opts;
  const startedAt = now();

  let raw: unknown;
  try {
    raw = await api.readDeployment(namespace, node, signal);
  } catch (err) {
    if (signal.aborted) return interruptedBeforeStart(opts, startedAt, now());
    throw apiToolError(`Reading Deployment ${namespace}/${node}`, api.server, err);
  }
  if (raw === undefined) {
    throw new ToolError(`Deployment ${namespace}/${node} does not exist: there is nothing to roll out.`, {
      hint: 'The rollout step runs after the apply created the Deployment; check the namespace and node name.',
    });
  }
  const initial = DeploymentSchema.parse(raw);
  const image = templateImage(initial.spec.template);

  let watch: RolloutWatch;
  try {
    watch = await openRolloutWatch(api, namespace, node, logger);
  } catch (err) {
    if (signal.aborted) return interruptedBeforeStart(opts, startedAt, now(), image);
    throw apiToolError(`Watching the rollout of ${namespace}/${node}`, api.server, err);
  }

  const show = (stage: RolloutStage, since: number, limit: number) => (v: Verdict) => deps.progress?.show(stage, v, now() - since, limit);
  const bootQueue = createBootQueueReader(api, namespace, startedAt + opts.timeoutMs, now, logger);
  const showRollout = show('rollout', startedAt, opts.timeoutMs);
  try {
    const first = await waitForVerdict(watch, {
      deadline: startedAt + opts.timeoutMs,
      signal,
      onVerdict: (v) => {
        showRollout(v);
        if (v.kind === 'waiting') bootQueue.consider(v.pod, v.phase === 'booting', now());
      },
      now,
      ...(opts.claimGraceMs !== undefined ? { claimGraceMs: opts.claimGraceMs } : {}),
    });
    deps.progress?.end();
    const waitMs = first.at - startedAt;
    const base = { version: 1 as const, node, namespace, image, systemdJobs: [], timeoutSeconds: Math.round(opts.timeoutMs / 1000), startedAt: new Date(startedAt).toISOString() };
    const prev = previousReplicaSet(first.snapshot);
    const previousImage = prev ? templateImage(prev.spec.template) : null;

    if (first.kind === 'interrupted') {
      return {
        ...base,
        outcome: 'interrupted',
        reason: 'interrupted',
        message: `interrupted while waiting for the rollout; nothing was rolled back. ${describeNodeState(first.snapshot)} The next \`deploy apply\` tries the rollout again.`,
        failedUnits: [],
        events: collectEvents(first.snapshot, startedAt - EVENTS_BEFORE_START_MS),
        lastState: describeCurrentPod(first.snapshot),
        logTail: [],
        previousImage,
        durations: { waitMs, evidenceReadMs: null, rollbackMs: null, evidenceToVerdictMs: null, evidenceToRollbackDoneMs: null, totalMs: now() - startedAt },
      };
    }
    const verdict = first.verdict;
    if (verdict.kind === 'ready') {
      return {
        ...base,
        outcome: 'ready',
        reason: 'ready',
        message: `pod ${verdict.pod} is ready`,
        failedUnits: [],
        events: [],
        lastState: describeCurrentPod(first.snapshot),
        logTail: [],
        previousImage,
        durations: { waitMs, evidenceReadMs: null, rollbackMs: null, evidenceToVerdictMs: null, evidenceToRollbackDoneMs: null, totalMs: now() - startedAt },
      };
    }

    // Failed: the evidence first, before a rollback replaces the pod.
    const lastState = describeFailedPod(first.snapshot, verdict.pod);
    const readStartedAt = now();
    const [logTail, queue] = await Promise.all([
      readLogTail(api, namespace, lastState, verdict.failedUnits, signal, logger),
      cutShort(verdict) ? bootQueue.atVerdict(lastState?.pod ?? verdict.pod, now(), signal) : Promise.resolve(undefined),
    ]);
    const evidenceReadMs = now() - readStartedAt;
    const systemdJobs = [...(queue?.jobs ?? [])];
    const why = queue ? `${verdict.message}; systemd was still waiting for ${describeJobs(systemdJobs)}${describeAge(queue.ageMs)}` : verdict.message;
    const evidence = {
      ...base,
      reason: verdict.reason,
      failedUnits: [...verdict.failedUnits],
      systemdJobs,
      // this rollout's events (the apply that started it ran just before), not older ones
      events: collectEvents(first.snapshot, startedAt - EVENTS_BEFORE_START_MS),
      lastState,
      logTail,
      previousImage,
    };
    logger?.info({ node, namespace, reason: verdict.reason, message: why }, 'rollout failed');

    const dep = first.snapshot.deployment;
    if (!prev || !dep) {
      return {
        ...evidence,
        outcome: 'failed-no-previous',
        message: `${why}; there is no previous revision to set back (first deploy of this node)`,
        durations: { waitMs, evidenceReadMs, rollbackMs: null, evidenceToVerdictMs: evidenceMs(verdict.evidenceAt, first.at), evidenceToRollbackDoneMs: null, totalMs: now() - startedAt },
      };
    }

    const rollbackStartedAt = now();
    const outcome = await rollBack(api, watch, dep, first.snapshot, opts, deps, show);
    const rollbackDoneAt = now();
    const rollbackMs = rollbackDoneAt - rollbackStartedAt;
    const durations = {
      waitMs,
      evidenceReadMs,
      rollbackMs,
      evidenceToVerdictMs: evidenceMs(verdict.evidenceAt, first.at),
      evidenceToRollbackDoneMs: outcome.outcome === 'rolled-back' && verdict.evidenceAt ? rollbackDoneAt - verdict.evidenceAt : null,
      totalMs: rollbackDoneAt - startedAt,
    };
    const rev = revisionOf(prev);
    const messages: Record<Exclude<RolloutOutcome, 'ready' | 'failed-no-previous'>, string> = {
      'rolled-back': why,
      'rollback-failed': `${why}; the rollback to revision ${rev} did not become ready: ${outcome.detail}`,
      interrupted: `${why}; interrupted during the rollback: ${outcome.detail}`,
    };
    return { ...evidence, outcome: outcome.outcome, message: messages[outcome.outcome], durations };
  } finally {
    deps.progress?.end();
    await watch.stop();
  }
}

function evidenceMs(evidenceAt: number | undefined, at: number): number | null {
  return evidenceAt !== undefined && Number.isFinite(evidenceAt) ? at - evidenceAt : null;
}

interface RollbackOutcome {
  readonly outcome: 'rolled-back' | 'rollback-failed' | 'interrupted';
  readonly detail: string;
}

async function rollBack(
  api: KubeApi,
  watch: RolloutWatch,
  dep: Deployment,
  snap: RolloutSnapshot,
  opts: RolloutOptions,
  deps: RolloutDeps,
  show: (stage: RolloutStage, since: number, limit: number) => (v: Verdict) => void,
): Promise<RollbackOutcome> {
  const now = deps.now ?? Date.now;
  const prev = previousReplicaSet(snap)!;
  const prevImage = templateImage(prev.spec.template);
  const started = now();
  let generation: number;
  try {
    // Guarded by the generation we classified: a newer template (a concurrent apply) is not overwritten.
    const patched = DeploymentSchema.parse(
      await api.patchDeployment(opts.namespace, opts.node, buildUndoPatch(prev, dep.metadata.generation ?? undefined), ROLLBACK_FIELD_MANAGER, deps.signal),
    );
    generation = patched.metadata.generation ?? 0;
  } catch (err) {
    if (deps.signal.aborted) return { outcome: 'interrupted', detail: 'the rollback patch was being sent; the Deployment may or may not be set back' };
    return { outcome: 'rollback-failed', detail: `setting the Deployment back to ${prevImage ?? `revision ${revisionOf(prev)}`} failed: ${describeApiError(err)}` };
  }
  deps.logger?.info({ node: opts.node, to: prevImage, revision: revisionOf(prev), generation }, 'rolled the Deployment back; waiting for the previous pod');
  const result: WaitResult = await waitForVerdict(watch, {
    deadline: started + opts.rollbackTimeoutMs,
    signal: deps.signal,
    minGeneration: generation,
    // the previous revision's pod decides; a progress deadline now is the failed revision's
    ignoreProgressDeadline: true,
    onVerdict: show('rollback', started, opts.rollbackTimeoutMs),
    now,
    ...(opts.claimGraceMs !== undefined ? { claimGraceMs: opts.claimGraceMs } : {}),
  });
  deps.progress?.end();
  if (result.kind === 'interrupted') {
    return { outcome: 'interrupted', detail: `the Deployment is set back to ${prevImage ?? '?'}, its pod was not ready yet. ${describeNodeState(result.snapshot)}` };
  }
  if (result.verdict.kind === 'ready') return { outcome: 'rolled-back', detail: `pod ${result.verdict.pod} is ready` };
  return { outcome: 'rollback-failed', detail: result.verdict.message };
}

/** The failing pod's state (the one the verdict names, else the current revision's). */
function describeFailedPod(snap: RolloutSnapshot, podName: string | undefined): LastState | null {
  const pod = podName ? snap.pods.find((p) => p.metadata.name === podName) : undefined;
  return pod ? describePod(snap, pod) : describeCurrentPod(snap);
}

async function readLogTail(
  api: KubeApi,
  namespace: string,
  state: LastState | null,
  failedUnits: readonly string[],
  signal: AbortSignal,
  logger?: Logger,
): Promise<string[]> {
  if (!state || state.container === null || state.container.startsWith('waiting: ContainerCreating')) return [];
  // A container that is not running now: its previous run has the log that explains it.
  const previous = state.container !== 'running' && state.restartCount > 0;
  let lines: string[] = [];
  try {
    lines = await api.readLogTail(namespace, state.pod, { container: CONTAINER_NAME, lines: LOG_LINES, previous }, signal);
  } catch (err) {
    logger?.debug({ pod: state.pod, err: describeApiError(err) }, 'no log tail');
  }
  if (lines.length > 0 || failedUnits.length === 0 || state.container !== 'running') return lines;
  // systemd as PID 1 writes to /dev/console, which a pod does not have: the container log is
  // empty. The journal of the failed units says why they failed; read it before the rollback
  // replaces the pod (bounded: the rollback waits for this).
  try {
    const units = failedUnits.slice(0, 5).flatMap((u) => ['-u', u]);
    return await api.execLines(namespace, state.pod, CONTAINER_NAME, ['journalctl', '--no-pager', '--quiet', '-o', 'short-precise', '-n', String(LOG_LINES), ...units], JOURNAL_MS, signal);
  } catch (err) {
    logger?.debug({ pod: state.pod, err: describeApiError(err) }, 'no journal of the failed units');
    return [];
  }
}

/** The deadline ended the wait while the pod was still on its way (not a terminal failure). */
function cutShort(verdict: Extract<Verdict, { kind: 'failed' }>): boolean {
  return verdict.reason === 'timeout' || verdict.reason === 'progress-deadline';
}

/** A queue sampled before the verdict: by then the kubelet was stopping the container. */
function describeAge(ageMs: number): string {
  return ageMs > 0 ? ` (read ${(ageMs / 1000).toFixed(0)}s before the verdict; at the verdict the container was already being stopped)` : '';
}

/** "The Deployment is at revision 3 (image ...); pod x: waiting: ContainerCreating." */
function describeNodeState(snap: RolloutSnapshot): string {
  const rs = currentReplicaSet(snap);
  if (!rs) return 'The Deployment has no ReplicaSet yet.';
  const pod = currentPod(snap, rs);
  const img = templateImage(rs.spec.template);
  const podText = pod ? (() => {
    const s = describePod(snap, pod);
    return `pod ${s.pod}: ${s.phase ?? '?'}, container ${s.container ?? 'not created'}${s.ready ? ', ready' : ', not ready'}`;
  })() : 'no pod yet';
  return `The Deployment is at revision ${revisionOf(rs)} (${img ?? 'unknown image'}); ${podText}.`;
}

function interruptedBeforeStart(opts: RolloutOptions, startedAt: number, at: number, image: string | null = null): RolloutReport {
  return {
    version: 1,
    node: opts.node,
    namespace: opts.namespace,
    outcome: 'interrupted',
    reason: 'interrupted',
    message: 'interrupted before the watch began; nothing was changed. The next `deploy apply` tries the rollout again.',
    failedUnits: [],
    events: [],
    lastState: null,
    logTail: [],
    systemdJobs: [],
    image,
    previousImage: null,
    timeoutSeconds: Math.round(opts.timeoutMs / 1000),
    startedAt: new Date(startedAt).toISOString(),
    durations: { waitMs: at - startedAt, evidenceReadMs: null, rollbackMs: null, evidenceToVerdictMs: null, evidenceToRollbackDoneMs: null, totalMs: at - startedAt },
  };
}

/**
 * The rollout step of one node: watch until the new revision's pod is ready, or fail fast on
 * a terminal reason; collect the evidence; set the Deployment back to the previous revision
 * (`kubectl rollout undo` semantics) and wait, bounded, for that pod; report.
 * Dependencies come in as arguments (the API, the clock, the signal, the progress sink).
 * The rollback: rollback.ts; the failed pod's log: log-tail.ts.
 */
import { ToolError } from '../errors.js';
import { createBootQueueReader } from './classify/boot-queue.js';
import { DeploymentSchema, templateImage } from '../kube/api-objects.js';
import type { Verdict } from './classify/classify.js';
import { collectEvents, describeCurrentPod, describeFailedPod } from './evidence.js';
import { apiToolError } from '../kube/api-error.js';
import type { KubeApi } from '../kube/kube-api.js';
import { readLogTail } from './log-tail.js';
import { describeNodeState } from './node-state.js';
import type { RolloutStage } from './progress.js';
import type { RolloutOutcome, RolloutReport } from './report.js';
import { rollBack } from './rollback.js';
import type { RolloutDeps, RolloutOptions } from './rollout-options.js';
import { openRolloutWatch, type RolloutWatch } from './rollout-watch.js';
import { previousReplicaSet, revisionOf } from './snapshot.js';
import { describeJobs } from './classify/systemd-jobs.js';
import { watchSoak } from './soak.js';
import { waitForVerdict } from './wait-for-verdict.js';

export type { RolloutDeps, RolloutOptions };

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
  const bootQueue = createBootQueueReader(api, namespace, startedAt + opts.timeout.ms, now, logger);
  const showRollout = show('rollout', startedAt, opts.timeout.ms);
  try {
    const wait = await waitForVerdict(watch, {
      deadline: startedAt + opts.timeout.ms,
      signal,
      onVerdict: (v) => {
        showRollout(v);
        if (v.kind === 'waiting') bootQueue.consider(v.pod, v.phase === 'booting', now());
      },
      now,
      ...(opts.claimGraceMs !== undefined ? { claimGraceMs: opts.claimGraceMs } : {}),
    });
    deps.progress?.end();
    const waitMs = wait.at - startedAt;
    // Ready: with a soak, the same pod must stay running that long (soak.ts); a fall is a
    // failure like any before Ready, and is treated below as one
    const soak = opts.soak !== undefined && opts.soak.ms > 0 ? opts.soak : undefined;
    const first = soak && wait.kind === 'verdict' && wait.verdict.kind === 'ready' ? await watchSoak(watch, { ...wait, verdict: wait.verdict }, { soak, signal, now, onHolding: (heldMs) => deps.progress?.show('soak', wait.verdict, heldMs, soak.ms) }) : wait;
    const soaking = first !== wait;
    deps.progress?.end();
    const base = { version: 1 as const, node, namespace, image, systemdJobs: [], timeoutSeconds: opts.timeout.seconds, ...(soak ? { soakSeconds: soak.seconds } : {}), startedAt: new Date(startedAt).toISOString() };
    const prev = previousReplicaSet(first.snapshot);
    const previousImage = prev ? templateImage(prev.spec.template) : null;

    if (first.kind === 'interrupted') {
      return {
        ...base,
        outcome: 'interrupted',
        reason: 'interrupted',
        message: `interrupted ${soaking ? `during the ${soak?.text} soak, ${Math.floor((first.at - wait.at) / 1000)}s after the pod was ready` : 'while waiting for the rollout'}; nothing was rolled back. ${describeNodeState(first.snapshot)} The next \`deploy apply\` tries the rollout again.`,
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
        message: soaking ? `pod ${verdict.pod} is ready and stayed running for the ${soak?.text} soak` : `pod ${verdict.pod} is ready`,
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
    logger?.info({ kind: 'rollout-failed', node, namespace, reason: verdict.reason, message: why }, 'rollout failed');

    const dep = first.snapshot.deployment;
    if (!prev || !dep) {
      return {
        ...evidence,
        outcome: 'failed-no-previous',
        message: `${why}; there is no previous revision to set back (this apply made the Deployment: a first deploy of the node, or its Deployment made again, as with a claim made again)`,
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

/** The deadline ended the wait while the pod was still on its way (not a terminal failure). */
function cutShort(verdict: Extract<Verdict, { kind: 'failed' }>): boolean {
  return verdict.reason === 'timeout' || verdict.reason === 'progress-deadline';
}

/** A queue sampled before the verdict: by then the kubelet was stopping the container. */
function describeAge(ageMs: number): string {
  return ageMs > 0 ? ` (read ${(ageMs / 1000).toFixed(0)}s before the verdict; at the verdict the container was already being stopped)` : '';
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
    timeoutSeconds: opts.timeout.seconds,
    startedAt: new Date(startedAt).toISOString(),
    durations: { waitMs: at - startedAt, evidenceReadMs: null, rollbackMs: null, evidenceToVerdictMs: null, evidenceToRollbackDoneMs: null, totalMs: at - startedAt },
  };
}

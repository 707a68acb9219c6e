/**
 * The rollback of a failed rollout: the Deployment set back to the previous ReplicaSet's
 * template (`kubectl rollout undo` semantics, src/rollout/undo-patch.ts), guarded by the
 * generation the verdict was made on, then a bounded wait for the previous revision's pod.
 */
import { ROLLBACK_FIELD_MANAGER } from '../contract/field-managers.js';
import { DeploymentSchema, templateImage, type Deployment } from '../kube/api-objects.js';
import type { Verdict } from './classify/classify.js';
import { describeApiError } from '../kube/api-error.js';
import { statusCode } from '../deadline.js';
import type { KubeApi } from '../kube/kube-api.js';
import { describeNodeState } from './node-state.js';
import type { RolloutStage } from './progress.js';
import type { RolloutDeps, RolloutOptions } from './rollout-options.js';
import type { RolloutWatch } from './rollout-watch.js';
import { previousReplicaSet, revisionOf, type RolloutSnapshot } from './snapshot.js';
import { buildUndoPatch } from './undo-patch.js';
import { waitForVerdict, type WaitResult } from './wait-for-verdict.js';

export interface RollbackOutcome {
  readonly outcome: 'rolled-back' | 'rollback-failed' | 'interrupted';
  readonly detail: string;
  /**
   * Whether the Deployment was set back (its one write): `yes`, `no` (the API server refused
   * the patch), or `unknown` (no answer: the patch dropped on an interrupt, or no answer in
   * time; it may have landed).
   */
  readonly written: 'yes' | 'no' | 'unknown';
}

export async function rollBack(
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
      await api.patchDeployment(opts.namespace, opts.node, buildUndoPatch(prev, dep.metadata.generation ?? undefined), ROLLBACK_FIELD_MANAGER, deps.finishWrites ? undefined : deps.signal),
    );
    generation = patched.metadata.generation ?? 0;
  } catch (err) {
    if (deps.signal.aborted && !deps.finishWrites) return { outcome: 'interrupted', written: 'unknown', detail: 'the rollback patch was being sent; the Deployment may or may not be set back' };
    // a refusal (4xx) wrote nothing; no answer, or a server's error (a 504 of a write that
    // timed out inside), may have landed
    const code = statusCode(err);
    const written = code !== undefined && code < 500 ? 'no' : 'unknown';
    return { outcome: 'rollback-failed', written, detail: `setting the Deployment back to ${prevImage ?? `revision ${revisionOf(prev)}`} failed: ${describeApiError(err)}` };
  }
  deps.logger?.info({ kind: 'rollout-rolled-back', node: opts.node, to: prevImage, revision: revisionOf(prev), generation }, 'rolled the Deployment back; waiting for the previous pod');
  const result: WaitResult = await waitForVerdict(watch, {
    deadline: started + opts.rollbackTimeout.ms,
    signal: deps.signal,
    minGeneration: generation,
    // the previous revision's pod decides; a progress deadline now is the failed revision's
    ignoreProgressDeadline: true,
    onVerdict: show('rollback', started, opts.rollbackTimeout.ms),
    now,
    ...(opts.claimGraceMs !== undefined ? { claimGraceMs: opts.claimGraceMs } : {}),
  });
  deps.progress?.end();
  if (result.kind === 'interrupted') {
    return { outcome: 'interrupted', written: 'yes', detail: `the Deployment is set back to ${prevImage ?? '?'}, its pod was not ready yet. ${describeNodeState(result.snapshot)}` };
  }
  if (result.verdict.kind === 'ready') return { outcome: 'rolled-back', written: 'yes', detail: `pod ${result.verdict.pod} is ready` };
  return { outcome: 'rollback-failed', written: 'yes', detail: result.verdict.message };
}

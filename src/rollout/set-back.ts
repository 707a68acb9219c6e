/**
 * One node set back to its previous image after its rollout had succeeded: the group's
 * rollback of --on-failure group (src/workflow/target/group-rollback.ts) for each node of the
 * run whose rollout step exited 0. The same rollback as the step's own (rollback.ts: the
 * previous ReplicaSet's template, guarded by the generation, then a bounded wait for its pod),
 * only once the node is checked to still run what this run rolled out: a Deployment that
 * someone changed since is left as it is.
 */
import { templateImage } from '../kube/api-objects.js';
import { describeApiError } from '../kube/api-error.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Verdict } from './classify/classify.js';
import type { RolloutStage } from './progress.js';
import { shortImage } from './report-format.js';
import { rollBack } from './rollback.js';
import type { RolloutDeps, RolloutOptions } from './rollout-options.js';
import { openRolloutWatch } from './rollout-watch.js';
import { previousReplicaSet } from './snapshot.js';

/** What setting one node back did, and what the node runs now. */
export interface SetBackResult {
  /** `changed`: the Deployment no longer holds the run's image (or its previous one is gone): not touched. */
  readonly outcome: 'rolled-back' | 'rollback-failed' | 'interrupted' | 'changed';
  readonly detail: string;
}

/** The node's rollout of this run: what it set, and what was there before. */
export interface RunRollout {
  readonly namespace: string;
  readonly node: string;
  readonly image: string | null;
  readonly previousImage: string;
}

export async function setBackNode(api: KubeApi, rollout: RunRollout, opts: Pick<RolloutOptions, 'timeout' | 'rollbackTimeout'>, deps: RolloutDeps): Promise<SetBackResult> {
  const { namespace, node } = rollout;
  let watch;
  try {
    watch = await openRolloutWatch(api, namespace, node, deps.logger);
  } catch (err) {
    if (deps.signal.aborted) return { outcome: 'interrupted', detail: 'interrupted before it was set back: it runs the image of this run' };
    return { outcome: 'rollback-failed', detail: `its Deployment could not be read: ${describeApiError(err)}` };
  }
  try {
    const snap = watch.snapshot();
    const dep = snap.deployment;
    const prev = previousReplicaSet(snap);
    const now = dep ? templateImage(dep.spec.template) : null;
    const before = prev ? templateImage(prev.spec.template) : null;
    if (!dep || !prev || now !== rollout.image || before !== rollout.previousImage) {
      const runs = dep ? `it runs ${shortImage(now)}` : 'its Deployment is gone';
      return { outcome: 'changed', detail: `not set back: its Deployment changed since its rollout (${runs}, not ${shortImage(rollout.image)} after ${shortImage(rollout.previousImage)})` };
    }
    const show = (stage: RolloutStage, since: number, limit: number) => (v: Verdict) => deps.progress?.show(stage, v, (deps.now ?? Date.now)() - since, limit);
    return await rollBack(api, watch, dep, snap, { namespace, node, ...opts }, deps, show);
  } finally {
    await watch.stop();
  }
}

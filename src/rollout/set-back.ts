/**
 * One node set back to its previous image after its rollout had succeeded: the group's
 * rollback of --on-failure group (src/workflow/target/group-rollback.ts) for each node of the
 * run whose rollout step exited 0. The same rollback as the step's own (rollback.ts: the
 * previous ReplicaSet's template, guarded by the generation, then a bounded wait for its pod),
 * only once the node is checked to still run what this run rolled out: a Deployment that
 * someone changed since is left as it is.
 *
 * An interrupt (the run's signal) stops the wait, never the write: each node's set-back is one
 * patch, let finish on the request's deadline (rollback.ts, finishWrites), so the result says
 * which image the Deployment holds (`holds`): the previous one (written), this run's (no write
 * was sent, or the API server refused it), or unknown (the patch had no answer).
 */
import { templateImage } from '../kube/api-objects.js';
import { describeApiError } from '../kube/api-error.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Verdict } from './classify/classify.js';
import type { RolloutStage } from './progress.js';
import { shortImage } from './report-format.js';
import type { Logger } from '../log.js';
import { rollBack, type RollbackOutcome } from './rollback.js';
import type { RolloutDeps, RolloutOptions } from './rollout-options.js';
import { openRolloutWatch, type RolloutWatch } from './rollout-watch.js';
import { previousReplicaSet } from './snapshot.js';

/** What setting one node back did, and what the node runs now. */
export interface SetBackResult {
  /** `changed`: the Deployment no longer holds the run's image (or its previous one is gone): not touched, `detail` says what it holds. */
  readonly outcome: 'rolled-back' | 'rollback-failed' | 'interrupted' | 'changed';
  /**
   * The image its Deployment holds now: `previous` (set back: its pod Ready only when the
   * outcome is `rolled-back`), `this-run` (untouched), `unknown` (a write without an answer),
   * `other` (someone else's: `changed`).
   */
  readonly holds: 'previous' | 'this-run' | 'unknown' | 'other';
  readonly detail: string;
}

const HOLDS: Record<RollbackOutcome['written'], SetBackResult['holds']> = { yes: 'previous', no: 'this-run', unknown: 'unknown' };

/** Opens the node's watch (openRolloutWatch; a test's watch in the unit tests). */
export type OpenWatch = (api: KubeApi, namespace: string, node: string, logger?: Logger) => Promise<RolloutWatch>;

/** The node's rollout of this run: what it set, and what was there before. */
export interface RunRollout {
  readonly namespace: string;
  readonly node: string;
  readonly image: string | null;
  readonly previousImage: string;
}

export async function setBackNode(api: KubeApi, rollout: RunRollout, opts: Pick<RolloutOptions, 'timeout' | 'rollbackTimeout'>, deps: RolloutDeps, open: OpenWatch = openRolloutWatch): Promise<SetBackResult> {
  const { namespace, node } = rollout;
  const untouched: SetBackResult = { outcome: 'interrupted', holds: 'this-run', detail: 'interrupted before it was set back: it runs the image of this run' };
  if (deps.signal.aborted) return untouched;
  let watch;
  try {
    // the watch's first lists take no signal: an interrupt stops the wait for them here
    watch = await untilAborted(open(api, namespace, node, deps.logger), deps.signal);
  } catch (err) {
    if (deps.signal.aborted) return untouched;
    return { outcome: 'rollback-failed', holds: 'this-run', detail: `its Deployment could not be read: ${describeApiError(err)}` };
  }
  if (watch === undefined) return untouched;
  try {
    const snap = watch.snapshot();
    const dep = snap.deployment;
    const prev = previousReplicaSet(snap);
    const now = dep ? templateImage(dep.spec.template) : null;
    const before = prev ? templateImage(prev.spec.template) : null;
    if (!dep || !prev || now !== rollout.image || before !== rollout.previousImage) {
      const runs = dep ? `it runs ${shortImage(now)}` : 'its Deployment is gone';
      return { outcome: 'changed', holds: 'other', detail: `its Deployment changed since its rollout (${runs}, not ${shortImage(rollout.image)} after ${shortImage(rollout.previousImage)})` };
    }
    // the last moment before the write: an interrupt now leaves the node as it is
    if (deps.signal.aborted) return untouched;
    const show = (stage: RolloutStage, since: number, limit: number) => (v: Verdict) => deps.progress?.show(stage, v, (deps.now ?? Date.now)() - since, limit);
    const r = await rollBack(api, watch, dep, snap, { namespace, node, ...opts }, { ...deps, finishWrites: true }, show);
    return { outcome: r.outcome, holds: HOLDS[r.written], detail: r.detail };
  } finally {
    await watch.stop();
  }
}

/** The watch once open, or undefined when the signal aborts first (the watch is then stopped once it opens). */
async function untilAborted(opening: Promise<RolloutWatch>, signal: AbortSignal): Promise<RolloutWatch | undefined> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const w = await Promise.race([opening, aborted]);
    if (w === undefined) void opening.then((late) => late.stop(), () => {});
    return w;
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/**
 * One target's saved plan applied (plan-target.ts made it): the rows of the changed nodes shown,
 * the no-op record dropped, `tofu apply`, then the rollout steps' reports, which give the exit
 * code (a failed rollout is a result, not an error); after a good apply the no-op record
 * written again when nobody but deploy wrote the objects during the run. Its collaborators come
 * in `parts` (target-wiring.ts); nothing here exits.
 */
import { stat } from 'node:fs/promises';
import { names } from '../../config/names.js';
import type { TargetModel } from '../../config/target-model.js';
import { ExitCode } from '../../errors.js';
import { rolloutsExitCode } from '../../rollout/report.js';
import { spireFailure } from '../../spire/spire-failure.js';
import { handEditsOf } from '../drift/undo-hand-edits.js';
import { markHeldBack, waitWords } from '../summary/held-back-nodes.js';
import { changedBehindTheApply } from '../noop/compare.js';
import { firstFew, notRecordedLine } from '../noop/record.js';
import { checkContextOf, readNodeNames, type PlannedApply } from './plan-target.js';
import { pushingNodes, type NodeSummary, type TargetSummary } from '../summary/plan-summary.js';
import type { TargetParts } from './target-wiring.js';
import type { TargetRunOptions, TargetRunResult } from './target-types.js';
import type { TargetSession } from './target-session.js';
import { echoTofu } from './tofu-events-shown.js';
import { graphPartOf } from '../../contract/graph/graph-ids.js';
import type { TofuEvent } from '../../tools/tofu/tofu-events.js';
import { rollBackGroupInCluster, wantsGroupRollback } from './group-rollback.js';

/** How long a failed or interrupted apply waits for its rollout steps' reports (they take < 1 s). */
const STEP_REPORT_GRACE_MS = 20_000;

/** What applyTarget needs of the run's options. */
export type ApplyOptions = Pick<TargetRunOptions, 'model' | 'tools' | 'kube' | 'env' | 'logger' | 'signal' | 'progress' | 'view'>;

export async function applyTarget(parts: Pick<TargetParts, 'noop' | 'tofu' | 'rolloutReports' | 'pushFirst'>, session: TargetSession, plan: PlannedApply, opts: ApplyOptions): Promise<TargetRunResult> {
  const { model, logger, signal } = opts;
  const { summary, mode } = plan;
  const graphDir = session.graphDir;
  const say = (line: string) => opts.progress(`[${model.target}] ${line}`);
  const noopCtx = checkContextOf(session, opts);
  const base = { ...session.tofu, onEvent: echoTofu({ target: model.target, view: opts.view, progress: opts.progress, env: opts.env, scoped: plan.scoped !== undefined, signal }) };
  const nodeNames = () => readNodeNames(mode, undefined, plan.scoped, () => parts.tofu.readOutputs(base));

  const pushing = pushingNodes(summary);
  const pushes = await describePushes(model, pushing);
  opts.view.planned({
    target: model.target,
    namespace: model.namespace,
    changes: summary.other.length > 0 || summary.spire.length > 0,
    nodes: summary.nodes.map((n) => ({ node: n.node, words: n.words, changes: nodeChanges(n), push: pushes.get(n.node), waits: waitWords(n) })),
  });
  // the target changes now: its record no longer says anything (a new one follows success)
  await parts.noop.forget(noopCtx);
  // the images first, so that a failed push changes nothing in the cluster (push-first.ts)
  if (pushing.size > 0) {
    say(`pushing ${pushing.size === 1 ? 'the image' : `${pushing.size} images`} before tofu's apply`);
    await parts.pushFirst({ target: model.target, graph: session.graph.document, nodes: pushing, env: session.tofu.env, dir: graphDir, signal, onEvent: (e) => opts.view.tofu(model.target, e) }).catch((err: unknown) => {
      opts.view.ended(model.target, false);
      throw err;
    });
  }
  opts.progress(`[${model.target}] tofu apply`);
  let failure: unknown;
  try {
    // tofu's push steps then end at once, and say nothing the rows have not said
    await parts.tofu.applyPlan({ ...base, onEvent: withoutPushesOf(pushing, base.onEvent), planFile: plan.planFile });
  } catch (err) {
    failure = spireFailure(err, 'apply', model.spire?.node) ?? err;
  }
  opts.view.ended(model.target, failure === undefined);
  if (failure !== undefined) {
    // on an interrupt tofu stops reading the rollout steps at once, while they are still
    // writing what they left: wait (bounded) for their reports, so the summary has them
    const left = await parts.rolloutReports.waitForRunningSteps(session.runDir, STEP_REPORT_GRACE_MS);
    if (left.length > 0) logger.warn({ kind: 'rollout-steps-unreported', steps: left }, 'rollout steps still running; their reports are missing');
  }
  const rollouts = await parts.rolloutReports.readRolloutReports(session.runDir);
  const rolloutCode = rolloutsExitCode(rollouts);
  if (failure !== undefined) {
    // A failed rollout step fails the apply; its report says more than tofu's error does.
    // (the names are a courtesy here: reading them must not hide the rollout's exit code)
    if (rolloutCode !== ExitCode.ok) {
      // --on-failure group: the nodes this run changed go back too (group-rollback.ts)
      const group = wantsGroupRollback(model, rollouts) ? await rollBackGroupInCluster(model, rollouts, opts) : undefined;
      return { summary: markHeldBack(model, summary, rollouts), rollouts, ...(group ? { groupRollback: group.nodes } : {}), applied: true, nodeNames: await nodeNames().catch(() => undefined), exitCode: group?.exitCode ?? rolloutCode, graphDir };
    }
    throw failure;
  }
  logger.debug({ kind: 'target-applied', target: model.target, rollouts: rollouts.length }, 'applied');
  if (plan.noFastPlan === undefined && rolloutCode === ExitCode.ok) {
    // taken after the rollout, kept only when every writer of the objects is deploy's own, no
    // hand edit is in them, and the objects the apply did not change are as before its plan
    const before = plan.fingerprintBefore;
    const after = await parts.noop.fingerprint(noopCtx, plan.graph);
    const during = (a: Exclude<typeof after, string>): string[] => [
      ...handEditsOf(model, a.seen.objects, plan.manifests, a.seen.state?.resources)
        .filter((e) => e.kind === 'Deployment' && e.action !== 'keep')
        .map((e) => `${e.kind}/${e.name} ${e.field} (${e.writer})`),
      ...(before === undefined ? ['no print of the target before the plan'] : changedBehindTheApply(before, a.fingerprint, changedObjects(model, summary), graphObject(model))),
    ];
    // every way to no record is said: the next plan is a full one, and the operator sees why
    // (a read that failed after the apply was a warning in the log alone: the search's seed
    // 536657023 round 104 ended so, with nothing on the screen to tell why)
    const notKept: string | undefined =
      typeof after === 'string'
        ? `the target could not be read after the apply (${after})`
        : await parts.noop.record(noopCtx, after.fingerprint, 'apply', before, during(after)).then(
            (stopped) => (stopped.length > 0 ? `written during this run by another than deploy: ${firstFew(stopped, ', ')}` : undefined),
            (err: Error) => `the record could not be written (${err.message})`,
          );
    if (notKept !== undefined) {
      logger.warn({ kind: 'noop-record', err: notKept }, 'the no-op record was not written');
      say(notRecordedLine(notKept));
    }
  }
  // the work is done: a stop now leaves the names out of the summary, not the apply's verdict
  // (it ended the run as "tofu output was interrupted" with exit 130, after a whole apply)
  const applied = await nodeNames().catch((err: unknown) => {
    if (signal.aborted) return undefined;
    throw err;
  });
  return { summary, rollouts, applied: true, nodeNames: applied, exitCode: rolloutCode, graphDir };
}

/** Whether the plan changes the object `Kind/name`: a changed node's, or the namespace and NetworkPolicy when the target's own part changes. */
function changedObjects(model: TargetModel, summary: TargetSummary): (key: string) => boolean {
  const keys = new Set<string>();
  for (const n of summary.nodes) {
    if (!nodeChanges(n) && !(n.handEdits ?? []).some((e) => e.action !== 'keep')) continue;
    keys.add(`Deployment/${names.deployment(n.node)}`).add(`PersistentVolumeClaim/${names.stateClaim(n.node)}`).add(`ServiceAccount/${names.serviceAccount(n.node)}`);
  }
  const targetPart = summary.other.length > 0;
  return (key) => keys.has(key) || (targetPart && (key === `Namespace/${model.namespace}` || key.startsWith('NetworkPolicy/')));
}

/** Whether `Kind/name` is an object the graph makes (not the namespace's own default service account, nor one made by hand). */
function graphObject(model: TargetModel): (key: string) => boolean {
  const keys = new Set([`Namespace/${model.namespace}`]);
  for (const n of model.nodes) keys.add(`Deployment/${names.deployment(n.name)}`).add(`PersistentVolumeClaim/${names.stateClaim(n.name)}`).add(`ServiceAccount/${names.serviceAccount(n.name)}`);
  return (key) => keys.has(key) || key.startsWith('NetworkPolicy/');
}

/**
 * What each pushing node's push moves, for its row: the archive's size, and, when other nodes of
 * this run push the same archive and tag, that it is uploaded once for them all (the first push to
 * start uploads it, the others mount its layers: stacks/image-scripts.ts).
 */
async function describePushes(model: TargetModel, pushing: ReadonlySet<string>): Promise<Map<string, string>> {
  // the pushing nodes by what they upload: one archive's size read once, however many share it
  const byUpload = new Map<string, { archive: string; nodes: string[] }>();
  for (const n of model.nodes) {
    if (!pushing.has(n.name)) continue;
    const key = `${n.archive}\n${n.tag}`;
    const upload = byUpload.get(key) ?? { archive: n.archive, nodes: [] };
    upload.nodes.push(n.name);
    byUpload.set(key, upload);
  }
  const words = new Map<string, string>();
  for (const { archive, nodes } of byUpload.values()) {
    const size = await stat(archive).then((s) => s.size, () => undefined);
    const text = [size === undefined ? undefined : `${(size / 1e6).toFixed(1)} MB archive`, nodes.length > 1 ? `one upload for ${nodes.length} nodes` : undefined].filter((w) => w !== undefined).join(', ');
    if (text !== '') for (const node of nodes) words.set(node, text);
  }
  return words;
}

/** tofu's events less those of the push steps of `pushed` (pushed before its apply), but for their failures. */
function withoutPushesOf(pushed: ReadonlySet<string>, onEvent: (e: TofuEvent) => void): (e: TofuEvent) => void {
  return (e) => {
    if ((e.kind === 'apply-start' || e.kind === 'apply-progress' || e.kind === 'apply-complete' || e.kind === 'provision') && isPushOf(pushed, e.address)) return;
    onEvent(e);
  };
}

function isPushOf(nodes: ReadonlySet<string>, address: string): boolean {
  const g = graphPartOf(address);
  return g?.scope === 'node' && g.part === 'push' && nodes.has(g.node);
}

/** Whether the plan changes anything of the node (its row then waits for the apply's events). */
function nodeChanges(n: NodeSummary): boolean {
  return n.removed || [n.push, n.deployment, n.claim, n.rollout, n.account ?? 'none'].some((c) => c !== 'none');
}

/**
 * One target planned, on one of three paths: **verified** (the no-op check answers "no changes"
 * without tofu), **scoped** (only the nodes whose part of the graph changed are planned, with
 * -target, tofu given the part of the graph they read: src/graph/scoped-graph.ts), or **full** (tofu plans the whole graph, and the run says why). Before tofu: the
 * target's objects read once for the check and the hand edits, and (apply) the hand edits the
 * graph does not set removed. After: the plan summarised per node, the /var/lib claim guard
 * and the archives to push checked (apply), the no-op record of a plan without changes.
 *
 * This is the executor: what follows from each read (the path, the lines, the refusals, the
 * -replace and -target, the record) is decided in target-planner.ts, without I/O; here the reads
 * and writes it asks for are done, in order. Its collaborators come in `parts`
 * (target-wiring.ts); nothing here exits.
 */
import { names } from '../../config/names.js';
import { DeployError, ExitCode } from '../../errors.js';
import { adviseApiError, describeApiError } from '../../kube/api-error.js';
import { spireFailure } from '../../spire/spire-failure.js';
import type { PlanResult } from '../../tools/tofu/tofu.js';
import { planDestroy } from './destroy-plan.js';
import { planPushingGoneTags } from './missing-tags.js';
import type { NoopCheckContext } from '../noop/check-context.js';
import { notRecordedLine } from '../noop/record.js';
import { nodeNamesFrom } from '../summary/node-names.js';
import { requirePushArchives } from './push-archives.js';
import type { TargetObjects } from '../drift/target-objects.js';
import type { TargetParts } from './target-wiring.js';
import type { Mode, TargetRunOptions } from './target-types.js';
import type { TargetSession } from './target-session.js';
import { echoTofu } from './tofu-events-shown.js';
import { namesFrom, type NamesFrom, type ScopedPlan, type TargetPlan } from './target-planner.js';
import { plannerCaller } from './planner-record.js';
import { scopedGraph, writeScopedGraph } from '../../graph/scoped-graph.js';
import { appliedManifests, graphManifests, handEditsOf, undoHandEdits, waitObserved } from '../drift/undo-hand-edits.js';

export type { PlanPath, PlannedApply, ScopedPlan, TargetPlan } from './target-planner.js';

/** What planTarget needs of the run's options. */
export type PlanOptions = Pick<TargetRunOptions, 'mode' | 'model' | 'tools' | 'kube' | 'allowVolumeReplacement' | 'env' | 'logger' | 'signal' | 'progress' | 'view'>;

/** What the no-op check and the objects' read take, of the session and the run. */
export function checkContextOf(session: TargetSession, opts: Pick<PlanOptions, 'model' | 'tools' | 'kube' | 'env' | 'signal'>): NoopCheckContext {
  return { model: opts.model, graphDir: session.graphDir, tools: opts.tools, kube: opts.kube, env: opts.env, backend: session.backend, signal: opts.signal };
}

export async function planTarget(parts: Pick<TargetParts, 'readTargetObjects' | 'noop' | 'tofu'>, session: TargetSession, opts: PlanOptions): Promise<TargetPlan> {
  const { model, mode, logger } = opts;
  const say = (line: string) => opts.progress(`[${model.target}] ${line}`);
  const noopCtx = checkContextOf(session, opts);
  // the planner's functions, each call recorded when DEPLOY_PLANNER_RECORD is set (planner-record.ts)
  const planner = plannerCaller(opts.env, model.target);
  const reads = planner('planReads', { mode, model, env: opts.env });
  // The target's objects and state, read once for the check and the hand edits (issue 34)
  // the graph as the session wrote it, parsed once there (never read back from the file)
  const graph = session.graph.document;
  const manifests = graphManifests(graph);
  const allowed = opts.allowVolumeReplacement ?? new Set<string>();
  const seen: TargetObjects | string = typeof reads.objects === 'string' ? reads.objects : await parts.readTargetObjects(noopCtx, reads.objects).catch((err: Error) => err.message);
  const judged = planner('judgeObjects', { mode, model, allowed, seen, manifests });
  for (const line of judged.lines) say(line);
  if (judged.refusal !== undefined) throw judged.refusal;
  // The verified no-op check (noop/verdict.ts): "no changes" without tofu when that is certain
  const verdict = reads.noFastPlan === undefined ? await parts.noop.check(noopCtx, seen, judged.edits, graph) : undefined;
  const decided = planner('decideBeforeTofu', { mode, model, allowed, seen, edits: judged.edits, risks: judged.risks, graph, verdict });
  for (const line of decided.lines) say(line);
  if (decided.path === 'verified') {
    if (decided.refusal !== undefined) throw decided.refusal;
    return decided.plan;
  }
  let before = decided;
  // The ownership step (undo-hand-edits.ts): the Deployments others wrote made the applied ones
  if (before.ownershipStep !== undefined && typeof seen !== 'string') {
    const io = seen;
    const { edits } = before;
    const applied = appliedManifests(io.state?.resources ?? []);
    const nodeOf = new Map(model.nodes.map((n) => [names.deployment(n.name), n.name]));
    const outcome = await undoHandEdits(
      edits,
      {
        patch: (name, ops, manager) => io.deployments.patch(name, ops, manager),
        read: (name) => io.deployments.read(name),
        editsOf: (object) => handEditsOf(model, [{ kind: 'Deployment', object }], manifests, io.state?.resources),
        objectOf: (name) => io.objects.find((o) => o.kind === 'Deployment' && o.object.metadata?.name === name)?.object,
        appliedOf: (name) => applied.get(nodeOf.get(name) ?? name),
        observed: (name) => waitObserved((n) => io.deployments.read(n), name, opts.signal),
      },
      say,
    ).catch((err: unknown) => {
      // the API server's answer says what to do (an invalid field names the hand edit there, and its writer)
      const advice = adviseApiError(err, edits);
      throw new DeployError(`the hand edits of target ${model.target} could not be removed: ${advice?.what ?? describeApiError(err)}`, ExitCode.tool, {
        hint: `nothing else was changed; ${advice?.hint ?? 'run deploy plan to see the hand edits, and remove the one named above with kubectl if the API server refuses the object without it'}`,
        cause: err,
      });
    });
    // the fingerprint before tofu's refresh, taken again: the step changed the objects
    const again = before.ownershipStep.fingerprintAgain ? await parts.noop.fingerprint(noopCtx, graph) : undefined;
    before = planner('afterOwnershipStep', { before, graph, outcome, fingerprintAgain: typeof again === 'object' ? again.fingerprint : again });
  }
  const { scoped, tofu: request } = before;
  const echo = { target: model.target, view: opts.view, progress: opts.progress, env: opts.env, scoped: scoped !== undefined, signal: opts.signal };
  const base = { ...session.tofu, onEvent: echoTofu(echo) };
  const { tofu } = parts;
  // init's chatter (provider lookups, the lock file's checksum warning) is noise here
  const initialised = await tofu.initGraph({ ...base, graph, onEvent: echoTofu(echo, true), onRun: () => opts.progress(`[${model.target}] tofu init (graph ${session.graphDir})`) });
  if (!initialised) opts.progress(`[${model.target}] graph ${session.graphDir}: initialised as before (no tofu init)`);
  if (before.submission !== undefined) {
    const refusal = planner('submissionRefusal', { model, outputs: before.submission.outputs ?? (await tofu.readOutputs(base)) });
    if (refusal !== undefined) throw refusal;
  }

  say(request.line);
  // a failure of the SPIRE steps (spire node unreachable, no bundle) in words that name the node
  const explained = (err: unknown): never => {
    throw spireFailure(err, request.verb, model.spire?.node) ?? err;
  };
  const { plan, pushedAgain } = await (request.destroy
    ? planDestroy((refresh) => tofu.planGraph({ ...base, destroy: true, refresh, logger }), say).then((p) => ({ plan: p, pushedAgain: new Set<string>() }))
    : planPushingGoneTags(
        async (gone) => {
          const replace = [...gone, ...request.replaceRollouts, ...request.replaceClaims];
          const { targets } = request;
          // a scoped plan: tofu is given the part of the graph its targets read (scoped-graph.ts)
          const dir = targets !== undefined && targets.length > 0 ? await writeScopedGraph(session.graphDir, scopedGraph(graph, [...targets, ...replace])) : session.graphDir;
          return tofu.planGraph({ ...base, dir, replace, targets, ...(request.refresh ? {} : { refresh: false }), logger });
        },
        async () => graph,
        (node) => model.nodes.find((n) => n.name === node)?.tagRef,
        say,
      )
  ).catch(explained);
  const after = planner('decideAfterTofu', { model, before, seen, plan, pushedAgain, noFastPlan: reads.noFastPlan, graph, manifests });
  if (after.refusal !== undefined) throw after.refusal;
  if (after.checkArchives) await requirePushArchives(model, after.summary, opts.env.PATH ?? '');
  // every way a plan without changes keeps no record is said, as apply-target.ts says its own
  // (the search's seed 562543228 round 131 ended with no record and nothing on the screen)
  if (after.noRecord !== undefined) {
    logger.info({ kind: 'noop-not-recorded', target: model.target, reason: after.noRecord }, 'the no-op record was not written');
    say(notRecordedLine(after.noRecord));
  }
  if (after.record !== undefined) {
    await parts.noop.record(noopCtx, after.record, 'plan').catch((err: Error) => {
      logger.warn({ kind: 'noop-record', err: err.message }, 'the no-op record was not written');
      say(notRecordedLine(`the record could not be written (${err.message})`));
    });
  }
  const { answer } = after;
  if ('toApply' in answer) return answer;
  return { path: answer.path, summary: answer.summary, nodeNames: await namesOf(answer.names, () => tofu.readOutputs(base)) };
}

/** The node names from where namesFrom says they are (tofu's outputs read only when asked). */
async function namesOf(from: NamesFrom, readOutputs: () => Promise<Record<string, { value: unknown }>>): Promise<string[] | undefined> {
  if (from.from === 'none') return undefined;
  return nodeNamesFrom(from.from === 'outputs' ? from.outputs : await readOutputs());
}

/** FR-009: the node names of a run (namesFrom), tofu's outputs read when neither the plan nor the check gave them. */
export function readNodeNames(
  mode: Mode,
  planned: PlanResult['outputs'],
  scoped: Pick<ScopedPlan, 'outputs'> | undefined,
  readOutputs: () => Promise<Record<string, { value: unknown }>>,
): Promise<string[] | undefined> {
  return namesOf(namesFrom(mode, planned, scoped), readOutputs);
}

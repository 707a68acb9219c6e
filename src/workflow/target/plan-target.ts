/**
 * One target planned, on one of three paths: **verified** (the no-op check answers "no changes"
 * without tofu), **scoped** (only the nodes whose part of the graph changed are planned, with
 * -target), or **full** (tofu plans the whole graph, and the run says why). Before tofu: the
 * target's objects read once for the check and the hand edits, and (apply) the hand edits the
 * graph does not set removed. After: the plan summarised per node, the /var/lib claim guard
 * and the archives to push checked (apply), the no-op record of a plan without changes.
 * Its collaborators come in `parts` (target-wiring.ts); nothing here exits.
 */
import { graphDocumentSchema } from '../../contract/graph/graph-document.js';
import { parseJson } from '../../contract/parse-json.js';
import { join } from 'node:path';
import type { TargetModel } from '../../config/target-model.js';
import { names } from '../../config/names.js';
import { GRAPH_FILE, graphPartOf } from '../../contract/graph/graph-ids.js';
import { SUBMISSION_OUTPUT } from '../../contract/graph/graph-outputs.js';
import { DeployError, ExitCode } from '../../errors.js';
import { adviseApiError, describeApiError } from '../../kube/api-error.js';
import { spireFailure } from '../../spire/spire-failure.js';
import type { PlanResult } from '../../tools/tofu/tofu.js';
import { refuseClaimLosses, refuseClaimRisks } from '../guard/claim-guard.js';
import { claimRisksOf, type ClaimRisk } from '../guard/claim-risk.js';
import { planDestroy } from './destroy-plan.js';
import { inSpec, type HandEdit } from '../drift/hand-edits.js';
import { typedDriftEdits } from '../drift/typed-drift.js';
import { planPushingGoneTags } from './missing-tags.js';
import { movedTags, type MovedTag } from './moved-tags.js';
import type { NoopCheckContext } from '../noop/check-context.js';
import type { TargetFingerprint } from '../noop/fingerprint.js';
import { whyNoFastPlan } from '../noop/fast-plan-switch.js';
import { nodeNamesFrom } from '../summary/node-names.js';
import { summarizePlan, type TargetSummary } from '../summary/plan-summary.js';
import { requirePushArchives } from './push-archives.js';
import type { TargetObjects } from '../drift/target-objects.js';
import type { TargetParts } from './target-wiring.js';
import type { Mode, TargetRunOptions } from './target-types.js';
import type { TargetSession } from './target-session.js';
import { echoTofu } from './tofu-events-shown.js';
import { appliedManifests, graphManifests, handEditsOf, readGraphText, undoable, undoHandEdits, waitObserved, type GraphDocument, type GraphManifests } from '../drift/undo-hand-edits.js';

export type PlanPath = 'verified' | 'scoped' | 'full';

/** What planTarget needs of the run's options. */
export type PlanOptions = Pick<TargetRunOptions, 'mode' | 'model' | 'tools' | 'kubeconfig' | 'allowVolumeReplacement' | 'env' | 'logger' | 'signal' | 'progress' | 'view'>;

/** Only some nodes changed, the rest verified: those nodes, planned alone (-target of their addresses). */
export interface ScopedPlan {
  readonly nodes: readonly string[];
  readonly targets: readonly string[];
  readonly movedTags: ReadonlyMap<string, MovedTag>;
  /** The state's outputs, as the check read them (the graph keeps them). */
  readonly outputs: Record<string, { value: unknown }>;
  /** false: their objects are as recorded, and the plan skips tofu's refresh (noop/verdict.ts) */
  readonly refresh: boolean;
}

export interface TargetPlan {
  readonly path: PlanPath;
  readonly summary: TargetSummary;
  /** FR-009: the node names as planned, or as the state holds them (a destroy: none); when there is nothing to apply. */
  readonly nodeNames?: readonly string[] | undefined;
  /** What applyTarget applies: set for an apply or destroy whose plan has changes. */
  readonly toApply?: PlannedApply | undefined;
}

/** A saved plan to apply, with what the run read before it. */
export interface PlannedApply {
  readonly mode: Exclude<Mode, 'plan'>;
  readonly planFile: string;
  readonly summary: TargetSummary;
  readonly scoped: ScopedPlan | undefined;
  /** Why this run keeps no no-op record (whyNoFastPlan, or a destroy); undefined: the apply's record is written after it. */
  readonly noFastPlan: string | undefined;
  /** The target's fingerprint before tofu's refresh (for the record after the apply). */
  readonly fingerprintBefore: TargetFingerprint | undefined;
  readonly graphText: string;
  readonly manifests: GraphManifests;
}

/** What the no-op check and the objects' read take, of the session and the run. */
export function checkContextOf(session: TargetSession, opts: Pick<PlanOptions, 'model' | 'tools' | 'kubeconfig' | 'env' | 'signal'>): NoopCheckContext {
  return { model: opts.model, graphDir: session.graphDir, tools: opts.tools, kubeconfig: opts.kubeconfig, env: opts.env, backend: session.backend, signal: opts.signal };
}

export async function planTarget(parts: Pick<TargetParts, 'readTargetObjects' | 'noop' | 'tofu'>, session: TargetSession, opts: PlanOptions): Promise<TargetPlan> {
  const { model, mode, logger } = opts;
  const say = (line: string) => opts.progress(`[${model.target}] ${line}`);
  const noopCtx = checkContextOf(session, opts);
  const noFastPlan = mode === 'destroy' ? 'destroy' : whyNoFastPlan(noopCtx);
  // The target's objects and state, read once for the check and the hand edits (issue 34)
  const graphText = await readGraphText(session.graphDir);
  const graphDoc = parseJson(graphDocumentSchema, graphText, `the graph ${join(session.graphDir, GRAPH_FILE)}`);
  const manifests = graphManifests(graphDoc);
  let seen: TargetObjects | string = 'a destroy reads nothing of the cluster before its plan';
  let edits: readonly HandEdit[] = [];
  let risks: readonly ClaimRisk[] = [];
  const allowed = opts.allowVolumeReplacement ?? new Set<string>();
  if (mode !== 'destroy') {
    // with the check to come, the registry's tags are read beside the cluster and the state
    seen = await parts.readTargetObjects(noopCtx, { tags: noFastPlan === undefined }).catch((err: Error) => err.message);
    if (typeof seen === 'string') say(`hand edits and /var/lib claims not looked at: the cluster's objects could not be read (${seen})`);
    else {
      edits = handEditsOf(model, seen.objects, manifests, seen.state?.resources);
      // law 18: a claim already at risk in the cluster (claim-risk.ts) stops the apply here,
      // before anything changes (an undone hand edit below would replace the pod and let it go)
      const judged = claimRisksOf(model, seen);
      if (typeof judged === 'string') say(`/var/lib claims not looked at: ${judged}`);
      else risks = judged;
      if (typeof seen.volumes === 'string' && risks.length > 0) say(`what becomes of the data on the claims at risk is not known: ${seen.volumes}`);
      if (mode === 'apply') refuseClaimRisks(model, risks, allowed);
    }
  }
  // a claim at risk that the flag lets go is made again by the plan (-replace), like a forced one
  const claims = { destroy: mode === 'destroy', allowed, risks, claimAddresses: claimAddresses(graphDoc) };
  const replaceClaims = risks.filter((r) => r.inCluster && allowed.has(r.node)).flatMap((r) => claims.claimAddresses.get(r.node) ?? []);
  // The verified no-op check (noop/verdict.ts): "no changes" without tofu when that is certain
  let fingerprintBefore: TargetFingerprint | undefined;
  let scoped: ScopedPlan | undefined;
  if (noFastPlan === undefined) {
    const verdict = await parts.noop.check(noopCtx, seen, edits, graphText);
    if (verdict.kind === 'scoped') {
      say(verdict.sentence);
      scoped = verdict;
      fingerprintBefore = verdict.fingerprint;
    } else if (verdict.kind === 'verified') {
      say(verdict.sentence);
      if (mode === 'apply') checkSubmission(model, verdict.outputs);
      const summary = summarizePlan(model, [], false, claims, { movedTags: verdict.movedTags, handEdits: edits });
      return { path: 'verified', summary: { ...summary, verifiedNoop: true }, nodeNames: nodeNamesFrom(verdict.outputs) };
    } else {
      say(`full plan: ${verdict.reason}`);
      fingerprintBefore = verdict.fingerprint;
    }
  }
  // The Deployments others wrote are made the applied ones before tofu plans
  // (undo-hand-edits.ts): its plan then starts from an object equal to its state, and its apply
  // ends as planned. A spec written so (hand-edits.ts inSpec: replicas, the template, anything
  // the controller acts on) may start or replace pods: the node's rollout step is replaced, and
  // waits for its pod (law 11). A plan says what the apply will do, with the same -replace.
  const removable = edits.filter(undoable);
  let replaceRollouts = rolloutAddresses(graphDoc, [...new Set(removable.filter((e) => inSpec(e) && e.node !== undefined).map((e) => e.node!))]);
  // (the edits the step wrote back: resolved before tofu plans)
  const undoneByStep = new Set<HandEdit>();
  if (mode === 'apply' && removable.length > 0 && typeof seen !== 'string') {
    const io = seen;
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
    replaceRollouts = rolloutAddresses(graphDoc, outcome.specWritten);
    for (const e of outcome.removed) undoneByStep.add(e);
    // the fingerprint before tofu's refresh, taken again: the step changed the objects
    if (fingerprintBefore !== undefined) {
      const again = await parts.noop.fingerprint(noopCtx, graphText);
      fingerprintBefore = typeof again === 'string' ? undefined : again.fingerprint;
    }
  }
  const echo = { target: model.target, view: opts.view, progress: opts.progress, env: opts.env, scoped: scoped !== undefined, signal: opts.signal };
  const base = { ...session.tofu, onEvent: echoTofu(echo) };
  const { tofu } = parts;
  // init's chatter (provider lookups, the lock file's checksum warning) is noise here
  const initialised = await tofu.initGraph({ ...base, onEvent: echoTofu(echo, true), onRun: () => opts.progress(`[${model.target}] tofu init (graph ${session.graphDir})`) });
  if (!initialised) opts.progress(`[${model.target}] graph ${session.graphDir}: initialised as before (no tofu init)`);
  // (a plan of some nodes: the check read the state's outputs already, and found the state as recorded)
  if (mode === 'apply') await checkSubmission(model, scoped?.outputs ?? (await tofu.readOutputs(base)));

  opts.progress(`[${model.target}] tofu plan${mode === 'destroy' ? ' -destroy' : ''}`);
  // a failure of the SPIRE steps (spire node unreachable, no bundle) in words that name the node
  const explained = (verb: string) => (err: unknown): never => {
    throw spireFailure(err, verb, model.spire?.node) ?? err;
  };
  const { plan, pushedAgain } = await (mode === 'destroy'
    ? planDestroy((refresh) => tofu.planGraph({ ...base, destroy: true, refresh, logger }), say).then((p) => ({ plan: p, pushedAgain: new Set<string>() }))
    : planPushingGoneTags(
        (replace) => tofu.planGraph({ ...base, replace: [...replace, ...replaceRollouts, ...replaceClaims], targets: scoped?.targets, ...(scoped?.refresh === false ? { refresh: false } : {}), logger }),
        async () => graphDoc,
        (node) => model.nodes.find((n) => n.name === node)?.tagRef,
        say,
      )
  ).catch(explained(mode === 'destroy' ? 'plan -destroy' : 'plan'));
  // FR-003: the digest each tag points at now against the one recorded at its push, from the
  // state the plan was made from (no process; the plan file is read in-process)
  // (a plan of some nodes reads only their tags, and the plan's state holds the others' as last
  // read: for those, the check's fresh reads)
  const planned = mode === 'destroy' ? undefined : movedTags(plan.priorState ?? []);
  const moved = scoped === undefined || planned === undefined ? planned : new Map([...scoped.movedTags, ...[...planned].filter(([node]) => scoped!.nodes.includes(node))]);
  // the typed objects' fields someone removed or changed without a field manager: tofu's drift (typed-drift.ts)
  const drifted = typeof seen === 'string' || mode === 'destroy' ? [] : typedDriftEdits(model, plan.changes, edits, seen.state?.resources ?? [], plan.priorState ?? []);
  const summary = summarizePlan(model, plan.changes, plan.hasChanges, claims, { pushedAgain, movedTags: moved, handEdits: [...edits, ...drifted] });
  // law 10: the claim of a node that stays goes only when the operator named the node
  if (mode === 'apply') refuseClaimLosses(model, summary.claimLosses);
  // every archive the apply pushes is there, before tofu changes anything (push-archives.ts)
  if (mode === 'apply' && plan.hasChanges) await requirePushArchives(model, summary, opts.env.PATH ?? '');
  // (not while a hand edit is there that neither the ownership step undid nor tofu sets back:
  // the next plan looks again)
  const unresolved = edits.some((e) => !undoneByStep.has(e) && (e.action === 'set-back' || (e.action === 'remove' && mode === 'plan')));
  // (nor while a claim is at risk: the next plan names it again, and its check never answers over it)
  if (!plan.hasChanges && pushedAgain.size === 0 && fingerprintBefore !== undefined && !unresolved && risks.length === 0) {
    // verified by tofu's refresh: the fingerprint taken before it is the target's no-op state
    await parts.noop.record(noopCtx, fingerprintBefore, 'plan').catch((err: Error) => logger.warn({ kind: 'noop-record', err: err.message }, 'the no-op record was not written'));
  }
  const path = scoped === undefined ? 'full' : 'scoped';
  if (mode === 'plan' || !plan.hasChanges) {
    return { path, summary, nodeNames: await readNodeNames(mode, plan.outputs, scoped, () => tofu.readOutputs(base)) };
  }
  return { path, summary, toApply: { mode, planFile: plan.planFile, summary, scoped, noFastPlan, fingerprintBefore, graphText, manifests } };
}

/**
 * FR-009: the node names from the graph's output: as planned, or (no change, or after the
 * apply) as the state holds them; a destroy leaves none. (A plan of some nodes: the outputs
 * are the state's, which the check found the graph keeps.)
 */
export async function readNodeNames(
  mode: Mode,
  planned: PlanResult['outputs'],
  scoped: Pick<ScopedPlan, 'outputs'> | undefined,
  readOutputs: () => Promise<Record<string, { value: unknown }>>,
): Promise<string[] | undefined> {
  return mode === 'destroy' ? undefined : nodeNamesFrom(planned ?? scoped?.outputs ?? (await readOutputs()));
}

/** The `null_resource` addresses of these nodes' rollout steps in the graph (for -replace). */
function rolloutAddresses(doc: GraphDocument, nodes: readonly string[]): string[] {
  if (nodes.length === 0) return [];
  return Object.keys(doc.resource?.null_resource ?? {})
    .filter((name) => {
      const p = graphPartOf(name);
      return p?.scope === 'node' && p.part === 'rollout' && nodes.includes(p.node);
    })
    .map((name) => `null_resource.${name}`)
    .sort();
}

/** Each node's claim address in the graph (`kubernetes_persistent_volume_claim_v1.<name>`), by node. */
function claimAddresses(doc: GraphDocument): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of Object.keys(doc.resource?.kubernetes_persistent_volume_claim_v1 ?? {})) {
    const p = graphPartOf(name);
    if (p?.scope === 'node' && p.part === 'state') out.set(p.node, `kubernetes_persistent_volume_claim_v1.${name}`);
  }
  return out;
}

/**
 * A submission is bound to its state: an apply with a different submission on the same
 * state key fails, naming both (the specification's submission rule).
 */
function checkSubmission(model: TargetModel, outputs: Record<string, { value: unknown }>): void {
  const recorded = outputs[SUBMISSION_OUTPUT]?.value;
  if (typeof recorded !== 'string' || recorded === '') return;
  const wanted = model.submissionId ?? '';
  if (recorded !== wanted) {
    throw new DeployError(
      `the state ${model.stateKey} belongs to submission "${recorded}", and this apply is ${wanted ? `for submission "${wanted}"` : 'without a submission'}`,
      ExitCode.usage,
      { hint: `apply the plan of submission "${recorded}", or destroy that deployment first` },
    );
  }
}

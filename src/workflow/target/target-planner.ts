/**
 * The decisions of one target's plan, apart from its I/O (issue 46): plan-target.ts reads, asks
 * these functions what follows from what it read, and does what their answer says, in order.
 * Each takes plain values (the mode, the model, the graph, the objects as read, the no-op
 * check's verdict, tofu's plan) and gives plain values (the lines to say, the refusals to
 * raise, the -replace and -target of the plan, whether the ownership step runs, whether the
 * no-op record is written, what the run returns); none of them reads or writes anything, so
 * that a unit test runs them over the inputs of a real run without a cluster or tofu.
 *
 * In the order of a run: planReads (what is read before the plan), judgeObjects (the hand
 * edits and the claims at risk in what was read), decideBeforeTofu (the check's verdict: the
 * path, and the plan tofu makes), afterOwnershipStep (what the step wrote changes the plan),
 * decideAfterTofu (tofu's plan: the summary, its guards, the record, the answer).
 */
import type { TargetModel } from '../../config/target-model.js';
import { graphPartOf } from '../../contract/graph/graph-ids.js';
import { SUBMISSION_OUTPUT } from '../../contract/graph/graph-outputs.js';
import { DeployError, ExitCode } from '../../errors.js';
import type { PlanResult } from '../../tools/tofu/tofu.js';
import { claimLossesRefusal, claimRisksRefusal, type ClaimLossOptions } from '../guard/claim-guard.js';
import { claimRisksOf, type ClaimRisk } from '../guard/claim-risk.js';
import { inSpec, shortHandEdit, type HandEdit } from '../drift/hand-edits.js';
import type { TargetObjects } from '../drift/target-objects.js';
import { typedDriftEdits } from '../drift/typed-drift.js';
import { handEditsOf, undoable, type GraphDocument, type GraphManifests, type UndoOutcome } from '../drift/undo-hand-edits.js';
import { whyNoFastPlan } from '../noop/fast-plan-switch.js';
import type { TargetFingerprint } from '../noop/fingerprint.js';
import type { NoopVerdict } from '../noop/verdict.js';
import { firstFew } from '../noop/record.js';
import { nodeNamesFrom } from '../summary/node-names.js';
import { summarizePlan, type TargetSummary } from '../summary/plan-summary.js';
import { movedTags, type MovedTag } from './moved-tags.js';
import type { Mode } from './target-types.js';

export type PlanPath = 'verified' | 'scoped' | 'full';

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
  /** The graph as the session wrote it (for the fingerprint after the apply). */
  readonly graph: GraphDocument;
  readonly manifests: GraphManifests;
}

/** What the planner reads of the target's objects (target-objects.ts): the objects and the state, not the client that wrote them. */
export type SeenObjects = Pick<TargetObjects, 'objects' | 'state' | 'claims' | 'volumes'>;

/** What a run reads before its plan. */
export interface PlanReads {
  /** Why the run neither asks the no-op check nor keeps its record (a destroy, or whyNoFastPlan); undefined: it does both. */
  readonly noFastPlan: string | undefined;
  /** The target's objects are read (with the registry's tags when the check is to come), or why they are not. */
  readonly objects: { readonly tags: boolean } | string;
}

export function planReads(mode: Mode, model: TargetModel, env: NodeJS.ProcessEnv): PlanReads {
  const noFastPlan = mode === 'destroy' ? 'destroy' : whyNoFastPlan({ model, env });
  // with the check to come, the registry's tags are read beside the cluster and the state
  return { noFastPlan, objects: mode === 'destroy' ? 'a destroy reads nothing of the cluster before its plan' : { tags: noFastPlan === undefined } };
}

/** What the objects as read say, before the check and before anything changes. */
export interface ObjectsJudged {
  readonly edits: readonly HandEdit[];
  readonly risks: readonly ClaimRisk[];
  /** The lines to say (what could not be looked at). */
  readonly lines: readonly string[];
  /** The refusal to raise now (an apply over a claim at risk that the flag does not let go). */
  readonly refusal: DeployError | undefined;
}

export interface JudgeInputs {
  readonly mode: Mode;
  readonly model: TargetModel;
  /** The nodes of --allow-volume-replacement. */
  readonly allowed: ReadonlySet<string>;
  /** The objects as read, or why they were not. */
  readonly seen: SeenObjects | string;
  readonly manifests: GraphManifests;
}

export function judgeObjects({ mode, model, allowed, seen, manifests }: JudgeInputs): ObjectsJudged {
  if (mode === 'destroy') return { edits: [], risks: [], lines: [], refusal: undefined };
  if (typeof seen === 'string') return { edits: [], risks: [], lines: [`hand edits and /var/lib claims not looked at: the cluster's objects could not be read (${seen})`], refusal: undefined };
  const edits = handEditsOf(model, seen.objects, manifests, seen.state?.resources);
  const lines: string[] = [];
  const judged = claimRisksOf(model, seen);
  if (typeof judged === 'string') lines.push(`/var/lib claims not looked at: ${judged}`);
  const risks = typeof judged === 'string' ? [] : judged;
  if (typeof seen.volumes === 'string' && risks.length > 0) lines.push(`what becomes of the data on the claims at risk is not known: ${seen.volumes}`);
  // law 18: a claim already at risk in the cluster (claim-risk.ts) stops the apply here,
  // before anything changes (an undone hand edit would replace the pod and let it go)
  return { edits, risks, lines, refusal: mode === 'apply' ? claimRisksRefusal(model, risks, allowed) : undefined };
}

export interface BeforeTofuInputs extends Pick<JudgeInputs, 'mode' | 'model' | 'allowed' | 'seen'>, Pick<ObjectsJudged, 'edits' | 'risks'> {
  readonly graph: GraphDocument;
  /** The no-op check's verdict; undefined when it was not asked (planReads' noFastPlan). */
  readonly verdict: NoopVerdict | undefined;
}

/** The check verified the target unchanged: no tofu at all. */
export interface VerifiedPlan {
  readonly path: 'verified';
  readonly lines: readonly string[];
  /** An apply whose state belongs to another submission. */
  readonly refusal: DeployError | undefined;
  readonly plan: TargetPlan;
}

/** The plan tofu makes: `tofu plan -destroy`, or a plan with these -replace and -target. */
export type TofuPlanRequest =
  | { readonly destroy: true; readonly line: string; readonly verb: string }
  | {
      readonly destroy: false;
      /** the progress line before it */
      readonly line: string;
      /** what failed, in the words of a SPIRE step's failure (spire-failure.ts) */
      readonly verb: string;
      /** the rollout steps of the nodes whose Deployment spec the ownership step writes (or would write) */
      readonly replaceRollouts: readonly string[];
      /** the claims at risk that the flag lets go: made again, like a forced one */
      readonly replaceClaims: readonly string[];
      readonly targets: readonly string[] | undefined;
      /** false: the plan skips tofu's refresh (a scoped plan of objects as recorded) */
      readonly refresh: boolean;
    };

/** The plan of a run that asks tofu (scoped or full), as far as it is known before tofu. */
export interface PlanForTofu {
  readonly path: 'scoped' | 'full';
  readonly mode: Mode;
  readonly lines: readonly string[];
  readonly scoped: ScopedPlan | undefined;
  /** The target's fingerprint before tofu's refresh (the record of a plan without changes is it). */
  readonly fingerprintBefore: TargetFingerprint | undefined;
  /**
   * Why there is no fingerprintBefore when the one taken again after the ownership step could
   * not be taken; absent otherwise (the check that took none said why: "full plan: ..."; a
   * record made before this field lacks it, and its replay answers as recorded).
   */
  readonly noFingerprint?: string;
  readonly edits: readonly HandEdit[];
  readonly risks: readonly ClaimRisk[];
  readonly claims: ClaimLossOptions;
  /** The ownership step runs (undo-hand-edits.ts), then the fingerprint is taken again when the run has one. */
  readonly ownershipStep: { readonly fingerprintAgain: boolean } | undefined;
  /** The hand edits the ownership step wrote back (resolved before tofu plans). */
  readonly undone: ReadonlySet<HandEdit>;
  /** The state's submission is checked after tofu init, against these outputs (undefined: tofu's, read then). */
  readonly submission: { readonly outputs: Record<string, { value: unknown }> | undefined } | undefined;
  readonly tofu: TofuPlanRequest;
}

export function decideBeforeTofu({ mode, model, allowed, seen, edits, risks, graph, verdict }: BeforeTofuInputs): VerifiedPlan | PlanForTofu {
  const claims: ClaimLossOptions = { destroy: mode === 'destroy', allowed, risks, claimAddresses: claimAddresses(graph) };
  if (verdict?.kind === 'verified') {
    const summary = summarizePlan(model, [], false, claims, { movedTags: verdict.movedTags, handEdits: edits });
    const plan: TargetPlan = { path: 'verified', summary: { ...summary, verifiedNoop: true }, nodeNames: nodeNamesFrom(verdict.outputs) };
    return { path: 'verified', lines: [verdict.sentence], refusal: mode === 'apply' ? submissionRefusal(model, verdict.outputs) : undefined, plan };
  }
  const scoped = verdict?.kind === 'scoped' ? verdict : undefined;
  // The Deployments others wrote are made the applied ones before tofu plans
  // (undo-hand-edits.ts): its plan then starts from an object equal to its state, and its apply
  // ends as planned. A spec written so (hand-edits.ts inSpec: replicas, the template, anything
  // the controller acts on) may start or replace pods: the node's rollout step is replaced, and
  // waits for its pod (law 11). A plan says what the apply will do, with the same -replace.
  const removable = edits.filter(undoable);
  const specNodes = [...new Set(removable.filter((e) => inSpec(e) && e.node !== undefined).map((e) => e.node!))];
  const fingerprintBefore = verdict?.kind === 'full' || verdict?.kind === 'scoped' ? verdict.fingerprint : undefined;
  // a claim at risk that the flag lets go is made again by the plan (-replace), like a forced one
  const replaceClaims = risks.filter((r) => r.inCluster && allowed.has(r.node)).flatMap((r) => claims.claimAddresses?.get(r.node) ?? []);
  const tofu: TofuPlanRequest =
    mode === 'destroy'
      ? { destroy: true, line: 'tofu plan -destroy', verb: 'plan -destroy' }
      : { destroy: false, line: 'tofu plan', verb: 'plan', replaceRollouts: rolloutAddresses(graph, specNodes), replaceClaims, targets: scoped?.targets, refresh: scoped?.refresh !== false };
  return {
    path: scoped === undefined ? 'full' : 'scoped',
    mode,
    lines: verdict === undefined ? [] : verdict.kind === 'full' ? [`full plan: ${verdict.reason}`] : [verdict.sentence],
    scoped,
    fingerprintBefore,
    edits,
    risks,
    claims,
    ownershipStep: mode === 'apply' && removable.length > 0 && typeof seen !== 'string' ? { fingerprintAgain: fingerprintBefore !== undefined } : undefined,
    undone: new Set(),
    // (a plan of some nodes: the check read the state's outputs already, and found the state as recorded)
    submission: mode === 'apply' ? { outputs: scoped?.outputs } : undefined,
    tofu,
  };
}

/**
 * The plan after the ownership step: the rollout steps replaced are those of the nodes whose
 * spec it wrote, its edits are resolved, and the fingerprint before tofu's refresh is the one
 * taken again (`fingerprintAgain`: undefined when none was taken, or why it could not be taken):
 * the step changed the objects.
 */
export function afterOwnershipStep(before: PlanForTofu, graph: GraphDocument, outcome: UndoOutcome, fingerprintAgain: TargetFingerprint | string | undefined): PlanForTofu {
  const tofu = before.tofu.destroy ? before.tofu : { ...before.tofu, replaceRollouts: rolloutAddresses(graph, outcome.specWritten) };
  const after = { ...before, tofu, undone: new Set(outcome.removed) };
  if (typeof fingerprintAgain === 'string') {
    return { ...after, fingerprintBefore: undefined, noFingerprint: `the fingerprint taken again after the ownership step could not be taken (${fingerprintAgain})` };
  }
  return { ...after, fingerprintBefore: fingerprintAgain };
}

/** Where the node names come from (FR-009): none (a destroy), these outputs, or tofu's outputs read now. */
export type NamesFrom = { readonly from: 'none' } | { readonly from: 'outputs'; readonly outputs: Readonly<Record<string, { readonly value?: unknown }>> } | { readonly from: 'tofu' };

/**
 * FR-009: the node names from the graph's output: as planned, or (no change, or after the
 * apply) as the state holds them; a destroy leaves none. (A plan of some nodes: the outputs
 * are the state's, which the check found the graph keeps.)
 */
export function namesFrom(mode: Mode, planned: PlanResult['outputs'], scoped: Pick<ScopedPlan, 'outputs'> | undefined): NamesFrom {
  if (mode === 'destroy') return { from: 'none' };
  const outputs = planned ?? scoped?.outputs;
  return outputs === undefined ? { from: 'tofu' } : { from: 'outputs', outputs };
}

export interface AfterTofuInputs {
  readonly model: TargetModel;
  readonly before: PlanForTofu;
  readonly seen: SeenObjects | string;
  readonly plan: PlanResult;
  /** The nodes whose push is planned again because the registry lost their tag (missing-tags.ts). */
  readonly pushedAgain: ReadonlySet<string>;
  readonly noFastPlan: string | undefined;
  readonly graph: GraphDocument;
  readonly manifests: GraphManifests;
}

/** What tofu's plan decides: the run's summary, its guards, the record, and the answer. */
export interface AfterTofu {
  readonly summary: TargetSummary;
  /** An apply that takes the claim of a node that stays without the flag (law 10). */
  readonly refusal: DeployError | undefined;
  /** Every archive the apply pushes must be there, before tofu changes anything (push-archives.ts). */
  readonly checkArchives: boolean;
  /** The no-op record to write (by the plan): the fingerprint taken before tofu's refresh; undefined: none. */
  readonly record: TargetFingerprint | undefined;
  /**
   * Why a plan without changes keeps no record (plan-target.ts says it, as apply-target.ts says
   * its own); absent when it keeps one, when the plan has changes (its apply records), and for a
   * destroy.
   */
  readonly noRecord?: string;
  /** The saved plan to apply, or the node names to read for the answer. */
  readonly answer: { readonly path: PlanPath; readonly summary: TargetSummary; readonly toApply: PlannedApply } | { readonly path: PlanPath; readonly summary: TargetSummary; readonly names: NamesFrom };
}

export function decideAfterTofu({ model, before, seen, plan, pushedAgain, noFastPlan, graph, manifests }: AfterTofuInputs): AfterTofu {
  const { mode, scoped, edits, fingerprintBefore } = before;
  // FR-003: the digest each tag points at now against the one recorded at its push, from the
  // state the plan was made from (no process; the plan file is read in-process)
  // (a plan of some nodes reads only their tags, and the plan's state holds the others' as last
  // read: for those, the check's fresh reads)
  const planned = mode === 'destroy' ? undefined : movedTags(plan.priorState ?? []);
  const moved = scoped === undefined || planned === undefined ? planned : new Map([...scoped.movedTags, ...[...planned].filter(([node]) => scoped.nodes.includes(node))]);
  // the typed objects' fields someone removed or changed without a field manager: tofu's drift (typed-drift.ts)
  const drifted = typeof seen === 'string' || mode === 'destroy' ? [] : typedDriftEdits(model, plan.changes, edits, seen.state?.resources ?? [], plan.priorState ?? []);
  const summary = summarizePlan(model, plan.changes, plan.hasChanges, before.claims, { pushedAgain, movedTags: moved, handEdits: [...edits, ...drifted] });
  // (not while a hand edit is there that neither the ownership step undid nor tofu sets back:
  // the next plan looks again)
  const unresolved = edits.filter((e) => !before.undone.has(e) && (e.action === 'set-back' || (e.action === 'remove' && mode === 'plan')));
  // (nor while a claim is at risk: the next plan names it again, and its check never answers over it)
  // verified by tofu's refresh: the fingerprint taken before it is the target's no-op state
  const recorded = !plan.hasChanges && pushedAgain.size === 0 && unresolved.length === 0 && before.risks.length === 0;
  const noRecord = plan.hasChanges || mode === 'destroy' ? undefined : whyNoRecord(before, unresolved, pushedAgain, noFastPlan);
  const path = before.path;
  return {
    summary,
    // law 10: the claim of a node that stays goes only when the operator named the node
    refusal: mode === 'apply' ? claimLossesRefusal(model, summary.claimLosses) : undefined,
    checkArchives: mode === 'apply' && plan.hasChanges,
    record: recorded ? fingerprintBefore : undefined,
    ...(noRecord === undefined ? {} : { noRecord }),
    answer:
      mode === 'plan' || !plan.hasChanges
        ? { path, summary, names: namesFrom(mode, plan.outputs, scoped) }
        : { path, summary, toApply: { mode, planFile: plan.planFile, summary, scoped, noFastPlan, fingerprintBefore, graph, manifests } },
  };
}

/**
 * Why a plan without changes keeps no record (undefined: it keeps one), every way at once: a
 * pushed-again tag, a hand edit neither undone nor set back, a claim at risk, no fingerprint
 * before the plan (none taken, or none taken again after the ownership step; not said with the
 * check off).
 */
function whyNoRecord(before: PlanForTofu, left: readonly HandEdit[], pushedAgain: ReadonlySet<string>, noFastPlan: string | undefined): string | undefined {
  const list = (xs: readonly string[]) => firstFew(xs, '; ');
  const s = (n: number) => (n === 1 ? '' : 's');
  const why: string[] = [];
  if (pushedAgain.size > 0) why.push(`the tag${s(pushedAgain.size)} of ${[...pushedAgain].sort().join(', ')} pushed again (the registry lost ${pushedAgain.size === 1 ? 'it' : 'them'})`);
  if (left.length > 0) {
    const named = left.map((e) => `${e.node ?? e.kind}: ${shortHandEdit(e)}`);
    const what = before.mode === 'plan' ? 'neither undone by a plan nor set back by tofu (an apply undoes them)' : 'neither undone by the ownership step nor set back by tofu';
    why.push(`hand edit${s(left.length)} ${what}: ${list(named)}`);
  }
  if (before.risks.length > 0) why.push(`/var/lib claim${s(before.risks.length)} at risk (${list(before.risks.map((r) => `${r.claim}: ${r.dangers.join(', ')}`))})`);
  // (a full plan for want of one said why: "full plan: <the check's reason>"; with the check
  // off (DEPLOY_FAST_PLAN=off, a target with SPIRE steps) no run keeps a record, by the
  // operator's choice or the design, and saying so at every plan would teach nothing)
  if (before.fingerprintBefore === undefined && (before.noFingerprint !== undefined || noFastPlan === undefined)) {
    why.push(before.noFingerprint ?? 'the check took no fingerprint of the target before the plan');
  }
  return why.length === 0 ? undefined : why.join('; ');
}

/**
 * A submission is bound to its state: an apply with a different submission on the same
 * state key fails, naming both (the specification's submission rule). The refusal, or undefined.
 */
export function submissionRefusal(model: TargetModel, outputs: Record<string, { value: unknown }>): DeployError | undefined {
  const recorded = outputs[SUBMISSION_OUTPUT]?.value;
  if (typeof recorded !== 'string' || recorded === '') return undefined;
  const wanted = model.submissionId ?? '';
  if (recorded === wanted) return undefined;
  return new DeployError(
    `the state ${model.stateKey} belongs to submission "${recorded}", and this apply is ${wanted ? `for submission "${wanted}"` : 'without a submission'}`,
    ExitCode.usage,
    { hint: `apply the plan of submission "${recorded}", or destroy that deployment first` },
  );
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

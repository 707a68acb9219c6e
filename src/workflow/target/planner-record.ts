/**
 * The planner's calls (target-planner.ts) as plan-target.ts makes them, and their record: with
 * DEPLOY_PLANNER_RECORD=<dir>, each call of a target writes `<dir>/<target>-<n>-<function>.json`
 * (n counts on from the files of that target already there), holding what the call took and what
 * it answered. The replay test (test/unit/workflow/target/target-planner-recorded.test.ts) runs
 * the same function over the inputs of each record under test/fixtures/planner/ and compares
 * the answers: a change of the planner that changes the decision of a recorded run fails a test
 * that names the run (docs/tests.md says how to record again, and when).
 *
 * What is written is what each function reads, and no more where the rest is large or could
 * be secret: of the environment, DEPLOY_FAST_PLAN alone (planReads reads nothing else; the
 * run's environment holds TF_HTTP_* credentials); of the target's objects, what SeenObjects
 * names (not the client that wrote them); of the graph, every block's type and name and each
 * Deployment's manifest (the planner reads the names of the rollout steps and claims; the
 * manifests come in `manifests`); of tofu's plan, all but its summary and warnings. The
 * codec (planner-record-schema.ts) redacts anything that looks like a credential besides.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { TargetModel } from '../../config/target-model.js';
import type { GraphDocument } from '../../contract/graph/graph-document.js';
import { parseJson } from '../../contract/parse-json.js';
import type { DeployError } from '../../errors.js';
import type { UndoOutcome } from '../drift/undo-hand-edits.js';
import { FAST_PLAN_ENV } from '../noop/fast-plan-switch.js';
import type { TargetFingerprint } from '../noop/fingerprint.js';
import {
  claimRiskSchema,
  decoded,
  editRefs,
  editRefsSchema,
  encodeValue,
  fingerprintSchema,
  fromEditRefs,
  graphDocumentSchema,
  handEditSchema,
  jsonSchema,
  manifestsSchema,
  modeSchema,
  planForTofuSchema,
  planReadSchema,
  seenSchema,
  targetModelSchema,
  verdictSchema,
  type Json,
} from './planner-record-schema.js';
import {
  afterOwnershipStep,
  decideAfterTofu,
  decideBeforeTofu,
  judgeObjects,
  planReads,
  submissionRefusal,
  type AfterTofu,
  type AfterTofuInputs,
  type BeforeTofuInputs,
  type JudgeInputs,
  type ObjectsJudged,
  type PlanForTofu,
  type PlanReads,
  type SeenObjects,
  type VerifiedPlan,
} from './target-planner.js';
import type { Mode } from './target-types.js';

/** The directory the planner's calls are recorded in, when set. */
export const PLANNER_RECORD_ENV = 'DEPLOY_PLANNER_RECORD';

const FORMAT = 'deploy-planner-record/1';

/** afterOwnershipStep's arguments, by name. */
export interface OwnershipInputs {
  readonly before: PlanForTofu;
  readonly graph: GraphDocument;
  readonly outcome: UndoOutcome;
  /** The fingerprint taken again, or why it could not be taken; undefined: none was taken. */
  readonly fingerprintAgain: TargetFingerprint | string | undefined;
}

/** Each function of the planner that plan-target.ts calls: what it takes (by name) and what it gives. */
export interface PlannerCalls {
  planReads: { inputs: { readonly mode: Mode; readonly model: TargetModel; readonly env: NodeJS.ProcessEnv }; answer: PlanReads };
  judgeObjects: { inputs: JudgeInputs; answer: ObjectsJudged };
  decideBeforeTofu: { inputs: BeforeTofuInputs; answer: VerifiedPlan | PlanForTofu };
  afterOwnershipStep: { inputs: OwnershipInputs; answer: PlanForTofu };
  decideAfterTofu: { inputs: AfterTofuInputs; answer: AfterTofu };
  submissionRefusal: { inputs: { readonly model: TargetModel; readonly outputs: Record<string, { value: unknown }> }; answer: DeployError | undefined };
}
export type PlannerFunction = keyof PlannerCalls;

const PLANNER: { readonly [F in PlannerFunction]: (inputs: PlannerCalls[F]['inputs']) => PlannerCalls[F]['answer'] } = {
  planReads: (i) => planReads(i.mode, i.model, i.env),
  judgeObjects,
  decideBeforeTofu,
  afterOwnershipStep: (i) => afterOwnershipStep(i.before, i.graph, i.outcome, i.fingerprintAgain),
  decideAfterTofu,
  submissionRefusal: (i) => submissionRefusal(i.model, i.outputs),
};

/** Calls a function of the planner (and records the call when the run records them). */
export type PlannerCall = <F extends PlannerFunction>(fn: F, inputs: PlannerCalls[F]['inputs']) => PlannerCalls[F]['answer'];

/**
 * The planner of one target's run: its functions called as they are, each call recorded in
 * DEPLOY_PLANNER_RECORD's directory when that is set. A call that cannot be recorded fails the
 * run (a record with a hole would replay another decision).
 */
export function plannerCaller(env: NodeJS.ProcessEnv, target: string): PlannerCall {
  const dir = env[PLANNER_RECORD_ENV];
  if (dir === undefined || dir === '') return (fn, inputs) => PLANNER[fn](inputs);
  let call = nextCall(dir, target);
  return (fn, inputs) => {
    const answer = PLANNER[fn](inputs);
    const file = join(dir, `${fileTarget(target)}-${call}-${fn}.json`);
    try {
      const record = { format: FORMAT, target, call, function: fn, inputs: encodeInputs(fn, inputs), answer: encodeAnswer(fn, answer) };
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, `${JSON.stringify(record, null, 1)}\n`);
    } catch (err) {
      throw new Error(`the planner's call ${fn} of target ${target} could not be recorded in ${file} (${PLANNER_RECORD_ENV}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    call++;
    return answer;
  };
}

function fileTarget(target: string): string {
  return target.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The number after the last call of this target recorded in `dir` (1 when none is). */
function nextCall(dir: string, target: string): number {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return 1;
  }
  const prefix = `${fileTarget(target)}-`;
  const calls = files.filter((f) => f.startsWith(prefix)).map((f) => Number(/^(\d+)-/.exec(f.slice(prefix.length))?.[1] ?? 0));
  return Math.max(0, ...calls) + 1;
}

// ---- what is written ----

/** What the planner reads of the target's objects: SeenObjects, a field absent when it was. */
function seenPart(seen: SeenObjects | string): SeenObjects | string {
  if (typeof seen === 'string') return seen;
  return { objects: seen.objects, state: seen.state, ...('claims' in seen ? { claims: seen.claims } : {}), ...('volumes' in seen ? { volumes: seen.volumes } : {}) };
}

/** The graph as the planner reads it: each block's type and name, a Deployment's manifest (graphManifests reads it). */
export function graphPart(doc: GraphDocument): GraphDocument {
  const blocks = (byType: Record<string, Record<string, Record<string, unknown>>>) =>
    Object.fromEntries(
      Object.entries(byType).map(([type, byName]) => [
        type,
        Object.fromEntries(Object.entries(byName).map(([name, body]) => [name, type === 'kubernetes_manifest' && 'manifest' in body ? { manifest: body.manifest } : {}])),
      ]),
    );
  return { ...(doc.resource !== undefined ? { resource: blocks(doc.resource) } : {}), ...(doc.data !== undefined ? { data: blocks(doc.data) } : {}) };
}

/** PlanForTofu with `undone` as refs into its `edits` (the planner tells them apart by identity). */
function planForTofuPart(p: PlanForTofu) {
  return { ...p, undone: editRefs(p.edits, p.undone) };
}

const same = <T>(v: T): unknown => v;

/** How each call's inputs and answer are shaped before the codec writes them (what is left out, the refs of the edits). */
const SHAPE: { readonly [F in PlannerFunction]: { readonly inputs: (i: PlannerCalls[F]['inputs']) => unknown; readonly answer: (a: PlannerCalls[F]['answer']) => unknown } } = {
  planReads: {
    inputs: (i) => {
      const fast = i.env[FAST_PLAN_ENV];
      return { ...i, env: fast === undefined ? {} : { [FAST_PLAN_ENV]: fast } };
    },
    answer: same,
  },
  judgeObjects: { inputs: (i) => ({ ...i, seen: seenPart(i.seen) }), answer: same },
  decideBeforeTofu: {
    inputs: (i) => ({ ...i, seen: seenPart(i.seen), graph: graphPart(i.graph) }),
    answer: (a) => (a.path === 'verified' ? a : planForTofuPart(a)),
  },
  afterOwnershipStep: {
    inputs: (i) => ({ before: planForTofuPart(i.before), graph: graphPart(i.graph), outcome: { removed: editRefs(i.before.edits, i.outcome.removed), specWritten: i.outcome.specWritten }, fingerprintAgain: i.fingerprintAgain }),
    answer: planForTofuPart,
  },
  decideAfterTofu: {
    inputs: (i) => {
      const { hasChanges, planFile, changes, outputs, priorState } = i.plan;
      const plan = { hasChanges, planFile, changes, ...('outputs' in i.plan ? { outputs } : {}), ...('priorState' in i.plan ? { priorState } : {}) };
      return { ...i, before: planForTofuPart(i.before), seen: seenPart(i.seen), plan, graph: graphPart(i.graph) };
    },
    answer: (a) => ('toApply' in a.answer ? { ...a, answer: { ...a.answer, toApply: { ...a.answer.toApply, graph: graphPart(a.answer.toApply.graph) } } } : a),
  },
  submissionRefusal: { inputs: same, answer: same },
};

function encodeInputs<F extends PlannerFunction>(fn: F, inputs: PlannerCalls[F]['inputs']): Json {
  return encodeValue(SHAPE[fn].inputs(inputs), `${fn}.inputs`);
}

/** An answer as written (and as the replay compares it). */
export function encodeAnswer<F extends PlannerFunction>(fn: F, answer: PlannerCalls[F]['answer']): Json {
  return encodeValue(SHAPE[fn].answer(answer), `${fn}.answer`);
}

// ---- what is read back ----

const recordOf = <F extends PlannerFunction, S extends z.ZodType>(fn: F, inputs: S) =>
  z.strictObject({ format: z.literal(FORMAT), target: z.string(), call: z.number().int().positive(), function: z.literal(fn), inputs: decoded(inputs), answer: jsonSchema });

const allowedSchema = z.set(z.string());
const outputsSchema = z.record(z.string(), z.looseObject({ value: z.unknown() }));

/** One record file: the call, its inputs decoded (Maps, Sets, undefined, the refs of the edits), its answer as written. */
export const plannerRecordSchema = z.discriminatedUnion('function', [
  recordOf('planReads', z.strictObject({ mode: modeSchema, model: targetModelSchema, env: z.record(z.string(), z.string()) })),
  recordOf('judgeObjects', z.strictObject({ mode: modeSchema, model: targetModelSchema, allowed: allowedSchema, seen: seenSchema, manifests: manifestsSchema })),
  recordOf(
    'decideBeforeTofu',
    z.strictObject({
      mode: modeSchema,
      model: targetModelSchema,
      allowed: allowedSchema,
      seen: seenSchema,
      edits: z.array(handEditSchema),
      risks: z.array(claimRiskSchema),
      graph: graphDocumentSchema,
      verdict: z.union([verdictSchema, z.undefined()]),
    }),
  ),
  recordOf(
    'afterOwnershipStep',
    z
      .strictObject({
        before: planForTofuSchema,
        graph: graphDocumentSchema,
        outcome: z.strictObject({ removed: editRefsSchema, specWritten: z.array(z.string()) }),
        fingerprintAgain: z.union([fingerprintSchema, z.string(), z.undefined()]),
      })
      .transform((i) => ({ ...i, outcome: { removed: fromEditRefs(i.before.edits, i.outcome.removed), specWritten: i.outcome.specWritten } })),
  ),
  recordOf(
    'decideAfterTofu',
    z.strictObject({
      model: targetModelSchema,
      before: planForTofuSchema,
      seen: seenSchema,
      // (summary and warnings are not recorded: the planner reads neither)
      plan: planReadSchema.transform((p) => ({ ...p, summary: undefined, warnings: [] })),
      pushedAgain: z.set(z.string()),
      noFastPlan: z.union([z.string(), z.undefined()]),
      graph: graphDocumentSchema,
      manifests: manifestsSchema,
    }),
  ),
  recordOf('submissionRefusal', z.strictObject({ model: targetModelSchema, outputs: outputsSchema })),
]);
export type PlannerRecord = z.output<typeof plannerRecordSchema>;

/** A record file's text, checked (`where`: its path, for the error). */
export function readPlannerRecord(text: string, where: string): PlannerRecord {
  return parseJson(plannerRecordSchema, text, where);
}

/** The recorded call made again over its inputs: the answer, written as the record writes it. */
export function replayPlannerCall(record: PlannerRecord): Json {
  switch (record.function) {
    case 'planReads':
      return encodeAnswer('planReads', PLANNER.planReads(record.inputs));
    case 'judgeObjects':
      return encodeAnswer('judgeObjects', PLANNER.judgeObjects(record.inputs));
    case 'decideBeforeTofu':
      return encodeAnswer('decideBeforeTofu', PLANNER.decideBeforeTofu(record.inputs));
    case 'afterOwnershipStep':
      return encodeAnswer('afterOwnershipStep', PLANNER.afterOwnershipStep(record.inputs));
    case 'decideAfterTofu':
      return encodeAnswer('decideAfterTofu', PLANNER.decideAfterTofu(record.inputs));
    case 'submissionRefusal':
      return encodeAnswer('submissionRefusal', PLANNER.submissionRefusal(record.inputs));
  }
}

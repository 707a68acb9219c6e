/**
 * The OpenTofu commands `deploy` runs on one graph directory (the synthesized `cdk.tf.json`,
 * its `.terraform.lock.hcl` and `.terraform/`): init, validate, plan, apply of a saved plan,
 * outputs, version. This is the API the runtime calls; how it works is one file per concept:
 *
 * - tofu-process.ts: how tofu is started (the caller's environment, the provider mirror's
 *   TF_CLI_CONFIG_FILE from providers.ts, deadlines, exactly one SIGINT on abort);
 * - tofu-json-run.ts: a `-json` command's stream parsed (tofu-events.ts) into typed events
 *   for the caller's progress and log;
 * - tofu-failure.ts: a failure as a TofuError naming the resource addresses, an interrupt as
 *   what tofu left;
 * - tofu-errored-state.ts: state tofu could not save (`errored.tfstate`, a state dump) kept
 *   at mode 0600, its path and the `tofu state push` to run reported, never printed;
 * - tofu-plan-json.ts: a saved plan's changes and planned outputs (`tofu show -json`).
 *
 * A destroy is a destroy plan (`planGraph({ destroy: true })`) and its apply (`applyPlan`);
 * src/workflow/target/destroy-plan.ts decides how that plan is made.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { createHash } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { GRAPH_FILE } from '../../contract/graph/graph-ids.js';
import { parseJson } from '../../contract/parse-json.js';
import { requireTool } from '../discover.js';
import { dropStaleProviderLock, LOCK_FILE, markProviderLock, mirroredBuilds } from '../provider-lock.js';
import { runTofuJson } from './tofu-json-run.js';
import { diagnosticSchema, toDiagnostic, type ChangeSummary, type TofuDiagnostic } from './tofu-events.js';
import type { PlannedResourceChange } from '../../contract/graph/planned-change.js';
import type { Logger } from '../../log.js';
import { planChanges } from '../planfile/plan-changes.js';
import type { TofuResource } from '../../contract/graph/tofu-state.js';
import { readSavedPlan } from '../planfile/plan-file.js';
import { planJsonSchema, readShownPlan, readShownPriorState, type PlannedOutput, type ShownPlan } from '../planfile/tofu-plan-json.js';
import { readTofuJson, TEN_MINUTES, type TofuOptions } from './tofu-process.js';

export type { ChangeAction, ChangeSummary, TofuDiagnostic, TofuEvent } from './tofu-events.js';
export { describeTofuEvent, formatDiagnostic } from './tofu-events.js';
export { TofuError } from './tofu-failure.js';
export { formatAttributePath, type PlannedOutput } from '../planfile/tofu-plan-json.js';
/** One resource instance the plan changes (from `tofu show -json <planfile>`): src/contract/graph/planned-change.ts. */
export type { PlannedResourceChange };
export type { TofuOptions } from './tofu-process.js';

export interface PlanResult {
  /** `-detailed-exitcode` 2: the plan changes something. */
  readonly hasChanges: boolean;
  /** The saved plan (absolute path), to pass to applyPlan. */
  readonly planFile: string;
  /** Every resource instance with an action other than no-op. */
  readonly changes: readonly PlannedResourceChange[];
  /**
   * The root outputs as planned (`planned_values.outputs` of `tofu show -json`; a value known
   * only after the apply has none). `undefined` when the plan has no changes: no `show` runs
   * then, and the outputs are the state's (`readOutputs`).
   */
  readonly outputs?: Readonly<Record<string, PlannedOutput>> | undefined;
  readonly summary: ChangeSummary | undefined;
  readonly warnings: readonly TofuDiagnostic[];
  /**
   * The resources of the state the plan was made from (the plan file's `tfstate`: after the
   * plan's refresh), read with the changes in one read of the file (or `prior_state` of `tofu
   * show -json` when that read fails). Not read for a destroy plan without changes.
   */
  readonly priorState?: readonly TofuResource[];
}

export interface ApplyResult {
  readonly summary: ChangeSummary | undefined;
  /** Names of the root outputs after the apply (values: readOutputs). */
  readonly outputNames: readonly string[];
  readonly warnings: readonly TofuDiagnostic[];
}

export interface ValidateResult {
  readonly valid: boolean;
  readonly diagnostics: readonly TofuDiagnostic[];
}

function lockArg(opts: TofuOptions): string {
  return opts.lockHeld ? '-lock=false' : `-lock-timeout=${opts.lockTimeout ?? '60s'}`;
}

function resolveIn(dir: string, p: string): string {
  return isAbsolute(p) ? p : join(dir, p);
}

/**
 * `tofu init`: providers from the mirror (offline) or the registry; the lock file stays in `dir`.
 * Returns false when it was not run: `dir` was initialised already with the same of everything
 * (initStamp); `onRun` is called just before tofu starts.
 */
export async function initGraph(
  opts: TofuOptions & {
    readonly reconfigure?: boolean;
    readonly onRun?: () => void;
    /** The graph as the caller wrote it (its `terraform` block is part of the init stamp); absent: read from `dir`. */
    readonly graph?: Readonly<Record<string, unknown>>;
  },
): Promise<boolean> {
  // -reconfigure: the graph directory is synthesized, the backend settings come per run from
  // the environment (TF_HTTP_*), and the state lives in the backend, so a stale
  // .terraform/terraform.tfstate must never ask for a state migration.
  const args = ['init', '-input=false', '-no-color', '-json'];
  if (opts.reconfigure ?? true) args.push('-reconfigure');
  // A lock written for other builds of the cache's providers (provider-lock.ts) would fail the init.
  await dropStaleProviderLock(opts.dir, opts.env);
  const stampFile = join(opts.dir, '.terraform', INIT_STAMP);
  const builds = mirroredBuilds(opts.env);
  const before = await initStamp(opts, args, builds);
  if (before !== undefined && (await readFile(stampFile, 'utf8').catch(() => undefined)) === before) return false;
  await rm(stampFile, { force: true });
  opts.onRun?.();
  await runTofuJson(opts, 'init', args, { timeoutMs: opts.timeoutMs ?? TEN_MINUTES });
  await markProviderLock(opts.dir, opts.env);
  const after = await initStamp(opts, args, builds);
  if (after !== undefined) await writeFile(stampFile, after);
  return true;
}

/**
 * Beside a graph's `.terraform`: what its last successful init was made of. An init of the
 * same (tofu, the cache's provider builds, the graph's `terraform` block, the lock file) is
 * skipped: it would install nothing and write the same files, and costs 0.4-0.7 s of a 1-node
 * apply of a 50-node group (issue 22's P2). The backend's address is not in it: it comes from
 * TF_HTTP_* at each run (the saved backend config holds none).
 */
const INIT_STAMP = 'deploy-init';

/** The graph's `terraform` block (backend, required providers): part of the init stamp. */
const graphTerraformSchema = z.looseObject({ terraform: z.unknown().optional() });

/** The `terraform` block of the graph file in `dir`, for a caller that does not hold the graph. */
async function readGraphTerraform(dir: string): Promise<Readonly<Record<string, unknown>>> {
  const graphFile = join(dir, GRAPH_FILE);
  return parseJson(graphTerraformSchema, await readFile(graphFile, 'utf8'), graphFile);
}

/** The stamp of an init of `dir` now (`builds`: provider-lock.ts mirroredBuilds), or undefined when the init must run (not the cache's mirror, no graph, no backend config yet). */
async function initStamp(opts: TofuOptions & { readonly graph?: Readonly<Record<string, unknown>> }, args: readonly string[], builds: string | undefined): Promise<string | undefined> {
  if (builds === undefined) return undefined;
  const tofu = opts.tofuPath ?? requireTool('tofu', opts.env).path;
  try {
    const graph = opts.graph ?? (await readGraphTerraform(opts.dir));
    const t = await stat(tofu, { bigint: true });
    const parts = [
      args.join(' '),
      `${tofu} ${t.dev}:${t.ino} ${t.size} ${t.mtimeNs}`,
      builds,
      JSON.stringify(graph.terraform ?? null),
      await readFile(join(opts.dir, LOCK_FILE), 'utf8'),
      await readFile(join(opts.dir, '.terraform', 'terraform.tfstate'), 'utf8'),
    ];
    return createHash('sha256').update(parts.join('\0')).digest('hex') + '\n';
  } catch {
    return undefined;
  }
}

const validateSchema = z.object({
  valid: z.boolean(),
  diagnostics: z.array(diagnosticSchema).default([]),
}).loose();

/** `tofu validate -json` (after init). Returns the verdict; does not throw on an invalid graph. */
export async function validateGraph(opts: TofuOptions): Promise<ValidateResult> {
  const v = await readTofuJson(opts, ['validate', '-no-color', '-json'], validateSchema, { okExitCodes: [0, 1] });
  return { valid: v.valid, diagnostics: v.diagnostics.map(toDiagnostic) };
}

/**
 * `tofu plan -out <planFile> -detailed-exitcode -json`, then, when there are changes,
 * `tofu show -json <planFile>` for the planned resource changes.
 */
export async function planGraph(
  opts: TofuOptions & {
    /** Where to save the plan; relative paths are relative to `dir`. @default 'tfplan' */
    readonly planFile?: string;
    /** Plan to destroy everything. */
    readonly destroy?: boolean;
    /** Extra `-target=` addresses (rarely right; for recovery). */
    readonly targets?: readonly string[];
    /** `-replace=` addresses: plan these resources to be replaced (e.g. a push whose tag is gone). */
    readonly replace?: readonly string[];
    /**
     * false: `-refresh=false`, plan from the state as it is, without reading the data sources
     * or the live objects first. @default true
     */
    readonly refresh?: boolean;
    /** Told (warn) when the saved plan is read by `tofu show -json` because the in-process reader is unsure of it. */
    readonly logger?: Pick<Logger, 'warn'>;
  },
): Promise<PlanResult> {
  const planFile = resolveIn(opts.dir, opts.planFile ?? 'tfplan');
  const args = ['plan', '-input=false', '-no-color', '-json', '-detailed-exitcode', lockArg(opts), `-out=${planFile}`];
  if (opts.destroy) args.push('-destroy');
  if (opts.refresh === false) args.push('-refresh=false');
  for (const t of opts.targets ?? []) args.push(`-target=${t}`);
  for (const r of opts.replace ?? []) args.push(`-replace=${r}`);
  const run = await runTofuJson(opts, 'plan', args, { okExitCodes: [0, 2] });
  const hasChanges = run.result.exitCode === 2;
  // Exit 0 is an empty diff: every resource change is a no-op, and no-ops are dropped below.
  // Reading the plan back would only load the providers' schemas and the state again: `tofu
  // show -json` of a 50-node plan took 5.0 s (6 s of CPU) here, a fifth of a no-op `deploy
  // plan` of that group (issue 11's bench). So it is skipped; and with changes the plan file
  // is read in-process (plan-changes.ts), with `tofu show -json` only when that reader is
  // unsure of the file.
  const read = hasChanges || !opts.destroy ? await readPlan(opts, planFile, hasChanges) : undefined;
  return {
    hasChanges,
    planFile,
    changes: read?.shown?.changes ?? [],
    outputs: read?.shown?.outputs,
    summary: run.summary,
    warnings: run.warnings,
    ...(read ? { priorState: read.priorState } : {}),
  };
}

/**
 * A saved plan's prior state, and its changes when `withChanges`: read in-process (the file's
 * format is OpenTofu's internal one, read by plan-file.ts and plan-changes.ts), or, on any
 * failure or doubt of that reader (an encrypted plan, an entry renamed, another format version,
 * a field it does not know), by `tofu show -json`, said at warn level with the reason: the
 * run is slower by that `show` (2-6 s) and someone should look at why.
 */
async function readPlan(
  opts: TofuOptions & { readonly logger?: Pick<Logger, 'warn'> },
  planFile: string,
  withChanges: boolean,
): Promise<{ shown?: ShownPlan; priorState: readonly TofuResource[] }> {
  try {
    const saved = await readSavedPlan(planFile);
    return { ...(withChanges ? { shown: planChanges(saved) } : {}), priorState: saved.state };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const message = `the saved plan could not be read in-process (${reason}): tofu show -json read it instead`;
    if (opts.logger) opts.logger.warn({ kind: 'plan-read-fallback', planFile, reason }, message);
    else opts.onEvent?.({ kind: 'log', level: 'warn', message });
    const plan = await readTofuJson(opts, ['show', '-no-color', '-json', planFile], planJsonSchema);
    return { ...(withChanges ? { shown: readShownPlan(plan) } : {}), priorState: readShownPriorState(plan) };
  }
}

/**
 * The resource changes of a saved plan (`tofu show -json`), values left out (secrets), and the
 * root outputs as planned (callers must not log a sensitive one).
 */
export async function showPlan(opts: TofuOptions, planFile: string): Promise<ShownPlan> {
  return readShownPlan(await readTofuJson(opts, ['show', '-no-color', '-json', resolveIn(opts.dir, planFile)], planJsonSchema));
}

/**
 * `tofu apply -json <planFile>`: applies exactly the saved plan, in the directory the plan file
 * is in, where it was made (a scoped plan is made in a directory of its own:
 * src/graph/scoped-graph.ts; a plan of the whole graph in the graph's).
 */
export async function applyPlan(opts: TofuOptions & { readonly planFile: string }): Promise<ApplyResult> {
  const planFile = resolveIn(opts.dir, opts.planFile);
  const args = ['apply', '-input=false', '-no-color', '-json', lockArg(opts), planFile];
  const run = await runTofuJson({ ...opts, dir: dirname(planFile) }, 'apply', args, { statefulRun: true });
  return { summary: run.summary, outputNames: run.outputNames, warnings: run.warnings };
}

const outputsSchema = z.record(z.string(), z.object({ value: z.unknown(), sensitive: z.boolean() }).loose());

/** `tofu output -json`: the root outputs' values. Values may be secret: do not log them. */
export async function readOutputs(opts: TofuOptions): Promise<Record<string, { value: unknown; sensitive: boolean }>> {
  const outputs = await readTofuJson(opts, ['output', '-no-color', '-json'], outputsSchema);
  return Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { value: v.value, sensitive: v.sensitive }]));
}

const versionSchema = z.object({ terraform_version: z.string(), provider_selections: z.record(z.string(), z.string()).default({}) }).loose();

/** `tofu version -json`. */
export async function readTofuVersion(opts: Pick<TofuOptions, 'env' | 'tofuPath' | 'signal'> & { readonly dir?: string }): Promise<{ version: string; providerSelections: Record<string, string> }> {
  const v = await readTofuJson({ dir: opts.dir ?? process.cwd(), ...opts }, ['version', '-json'], versionSchema, { timeoutMs: 30_000 });
  return { version: v.terraform_version, providerSelections: v.provider_selections };
}

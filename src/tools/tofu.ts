/**
 * The OpenTofu runner: init, validate, plan, apply of a saved plan, destroy, outputs, for one
 * graph directory (the synthesized `cdk.tf.json`, its `.terraform.lock.hcl` and `.terraform/`).
 *
 * - Providers come from the offline mirror when there is one (TF_CLI_CONFIG_FILE, see
 *   discover.ts); otherwise `tofu init` downloads them as usual.
 * - Every command runs with `-json`; the stream is parsed (tofu-events.ts) into typed events
 *   for the caller's progress and log, and diagnostics become a TofuError naming the resource
 *   addresses.
 * - An abort reaches tofu as exactly one SIGINT: tofu then finishes the operations in flight,
 *   saves state and releases the lock; a second interrupt would make it abandon state.
 * - If tofu could not save state it leaves `errored.tfstate` in the graph directory: it is
 *   kept at mode 0600, its path and the `tofu state push` to run are reported, and it is
 *   never printed.
 */
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { InterruptedError, ToolError, type ErrorDetails } from '../errors.js';
import { findProviderConfig, INSTALL_HINTS, requireTool } from './discover.js';
import { runTool, type RunResult } from './run.js';
import type { PlannedResourceChange } from '../contract/planned-change.js';
import {
  diagnosticSchema,
  formatDiagnostic,
  parseTofuLine,
  toDiagnostic,
  type ChangeAction,
  type ChangeSummary,
  type TofuDiagnostic,
  type TofuEvent,
} from './tofu-events.js';

export type { ChangeSummary, TofuDiagnostic, TofuEvent } from './tofu-events.js';
export { describeTofuEvent } from './tofu-events.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface TofuOptions {
  /** The graph directory: where cdk.tf.json is, and where the lock file is kept. */
  readonly dir: string;
  /**
   * Extra environment for tofu, over the process environment: TF_HTTP_* (backend),
   * KUBE_CONFIG_PATH, DEPLOY_BIN, DEPLOY_RUN_DIR, TF_CLI_CONFIG_FILE (wins over the cache's).
   */
  readonly env?: Env;
  /** Aborting it interrupts tofu once (it stops cleanly and saves state). */
  readonly signal?: AbortSignal;
  /** Each parsed event of the -json stream, as it arrives. */
  readonly onEvent?: (event: TofuEvent) => void;
  /** Deadline of one tofu command. @default 60 minutes (init: 10 minutes) */
  readonly timeoutMs?: number;
  /** How long tofu may take to stop after the interrupt before it is killed. @default 5 minutes */
  readonly interruptGraceMs?: number;
  /**
   * Who gets the one SIGINT on abort. 'group' (default): tofu and the commands its local-exec
   * steps run (e.g. `deploy rollout`), each exactly once, so they can wind down too; tofu's
   * own local-exec Stop only SIGKILLs the step's shell at once
   * (internal/builtin/provisioners/local-exec: exec.CommandContext), which orphans what the
   * shell started. The provider plugins ignore SIGINT (go-plugin). 'process': tofu only.
   */
  readonly interruptTarget?: 'process' | 'group';
  /** `-lock-timeout` for commands that take the state lock. @default '60s' */
  readonly lockTimeout?: string;
  /**
   * The caller holds the state lock for the whole run (src/state/run-lock.ts) and put its ID
   * in TF_HTTP_ADDRESS: plan and apply run with `-lock=false`.
   */
  readonly lockHeld?: boolean;
  /** The tofu program; default: discovered (DEPLOY_TOFU, the cache, PATH). */
  readonly tofuPath?: string;
}

/** A failed tofu command: its diagnostics and the resources that failed. */
export class TofuError extends ToolError {
  readonly diagnostics: readonly TofuDiagnostic[];
  /** Addresses of resources whose apply failed (apply_errored), in order. */
  readonly failedAddresses: readonly string[];
  constructor(message: string, diagnostics: readonly TofuDiagnostic[], failedAddresses: readonly string[], details: ErrorDetails = {}) {
    super(message, details);
    this.diagnostics = diagnostics;
    this.failedAddresses = failedAddresses;
  }
}

/** One resource instance the plan changes (from `tofu show -json <planfile>`): src/contract/planned-change.ts. */
export type { PlannedResourceChange };

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
}

export interface ApplyResult {
  readonly summary: ChangeSummary | undefined;
  /** Names of the root outputs after the apply (values: readOutputs). */
  readonly outputNames: readonly string[];
  readonly warnings: readonly TofuDiagnostic[];
}

const TEN_MINUTES = 10 * 60_000;
const ONE_HOUR = 60 * 60_000;
const FIVE_MINUTES = 5 * 60_000;

function lockArg(opts: TofuOptions): string {
  return opts.lockHeld ? '-lock=false' : `-lock-timeout=${opts.lockTimeout ?? '60s'}`;
}

/** `tofu init`: providers from the mirror (offline) or the registry; the lock file stays in `dir`. */
export async function initGraph(opts: TofuOptions & { readonly reconfigure?: boolean }): Promise<void> {
  // -reconfigure: the graph directory is synthesized, the backend settings come per run from
  // the environment (TF_HTTP_*), and the state lives in the backend, so a stale
  // .terraform/terraform.tfstate must never ask for a state migration.
  const args = ['init', '-input=false', '-no-color', '-json'];
  if (opts.reconfigure ?? true) args.push('-reconfigure');
  await runTofuJson(opts, 'init', args, { timeoutMs: opts.timeoutMs ?? TEN_MINUTES });
}

export interface ValidateResult {
  readonly valid: boolean;
  readonly diagnostics: readonly TofuDiagnostic[];
}

const validateSchema = z.object({
  valid: z.boolean(),
  diagnostics: z.array(diagnosticSchema).default([]),
}).loose();

/** `tofu validate -json` (after init). Returns the verdict; does not throw on an invalid graph. */
export async function validateGraph(opts: TofuOptions): Promise<ValidateResult> {
  const r = await runTofu(opts, ['validate', '-no-color', '-json'], { okExitCodes: [0, 1], keepStdout: true, timeoutMs: opts.timeoutMs ?? TEN_MINUTES });
  const parsed = validateSchema.safeParse(safeJson(r.stdout));
  if (!parsed.success) throw unexpectedOutput('tofu validate -json', r);
  return {
    valid: parsed.data.valid,
    diagnostics: parsed.data.diagnostics.map(toDiagnostic),
  };
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
    /**
     * false: `-refresh=false`, plan from the state as it is, without reading the data sources
     * or the live objects first. @default true
     */
    readonly refresh?: boolean;
  },
): Promise<PlanResult> {
  const planFile = resolveIn(opts.dir, opts.planFile ?? 'tfplan');
  const args = ['plan', '-input=false', '-no-color', '-json', '-detailed-exitcode', lockArg(opts), `-out=${planFile}`];
  if (opts.destroy) args.push('-destroy');
  if (opts.refresh === false) args.push('-refresh=false');
  for (const t of opts.targets ?? []) args.push(`-target=${t}`);
  const run = await runTofuJson(opts, 'plan', args, { okExitCodes: [0, 2] });
  const hasChanges = run.result.exitCode === 2;
  // Exit 0 is an empty diff: every resource change is a no-op, and no-ops are dropped below.
  // Reading the plan back would only load the providers' schemas and the state again: `tofu
  // show -json` of a 50-node plan took 5.0 s (6 s of CPU) here, a fifth of a no-op `deploy
  // plan` of that group (issue 11's bench). So it is skipped.
  const shown = hasChanges ? await showPlan(opts, planFile) : undefined;
  return {
    hasChanges,
    planFile,
    changes: shown?.changes ?? [],
    outputs: shown?.outputs,
    summary: run.summary,
    warnings: run.warnings,
  };
}

const planJsonSchema = z
  .object({
    resource_changes: z
      .array(
        z
          .object({
            address: z.string(),
            mode: z.string(),
            type: z.string(),
            name: z.string(),
            change: z.object({ actions: z.array(z.string()), replace_paths: z.array(z.array(z.union([z.string(), z.number()]))).optional() }).loose(),
            action_reason: z.string().optional(),
          })
          .loose(),
      )
      .optional(),
    planned_values: z
      .object({ outputs: z.record(z.string(), z.object({ value: z.unknown().optional(), sensitive: z.boolean() }).loose()).optional() })
      .loose()
      .optional(),
  })
  .loose();

/** A root output as planned: no `value` when it is known only after the apply. */
export interface PlannedOutput {
  readonly value?: unknown;
  readonly sensitive: boolean;
}

/**
 * The resource changes of a saved plan (`tofu show -json`), values left out (secrets), and the
 * root outputs as planned (callers must not log a sensitive one).
 */
export async function showPlan(opts: TofuOptions, planFile: string): Promise<{ changes: PlannedResourceChange[]; outputs: Record<string, PlannedOutput> }> {
  const r = await runTofu(opts, ['show', '-no-color', '-json', resolveIn(opts.dir, planFile)], { keepStdout: true, timeoutMs: opts.timeoutMs ?? TEN_MINUTES });
  const parsed = planJsonSchema.safeParse(safeJson(r.stdout));
  if (!parsed.success) throw unexpectedOutput('tofu show -json', r);
  const outputs = Object.fromEntries(
    Object.entries(parsed.data.planned_values?.outputs ?? {}).map(([k, o]) => [k, { ...(o.value !== undefined ? { value: o.value } : {}), sensitive: o.sensitive }]),
  );
  const changes = (parsed.data.resource_changes ?? [])
    .filter((c) => !(c.change.actions.length === 1 && c.change.actions[0] === 'no-op'))
    .map((c) => ({
      address: c.address,
      mode: c.mode,
      type: c.type,
      name: c.name,
      actions: c.change.actions,
      actionReason: c.action_reason,
      ...changedKeysOf(c.change),
      ...(c.change.replace_paths ? { replacePaths: c.change.replace_paths.map(formatAttributePath) } : {}),
    }));
  return { changes, outputs };
}

/** `["spec", 0, "storage_class_name"]` -> `spec[0].storage_class_name` (tofu's own way of writing it). */
export function formatAttributePath(path: readonly (string | number)[]): string {
  return path.map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`)).join('');
}

/** Names of the map entries of `triggers` or `data` that differ between before and after. */
function changedKeysOf(change: Readonly<Record<string, unknown>>): { changedKeys?: string[] } {
  const map = (v: unknown, attr: string): Record<string, unknown> | undefined => {
    const m = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[attr] : undefined;
    return m !== null && typeof m === 'object' ? (m as Record<string, unknown>) : undefined;
  };
  for (const attr of ['triggers', 'data']) {
    const before = map(change.before, attr);
    const after = map(change.after, attr);
    const unknown = map(change.after_unknown, attr);
    if (before === undefined || (after === undefined && unknown === undefined)) continue;
    const keys = new Set([...Object.keys(before), ...Object.keys(after ?? {}), ...Object.keys(unknown ?? {})]);
    const changed = [...keys].filter((k) => unknown?.[k] === true || JSON.stringify(before[k]) !== JSON.stringify(after?.[k])).sort();
    return { changedKeys: changed };
  }
  return {};
}

/** `tofu apply -json <planFile>`: applies exactly the saved plan. */
export async function applyPlan(opts: TofuOptions & { readonly planFile: string }): Promise<ApplyResult> {
  const planFile = resolveIn(opts.dir, opts.planFile);
  const args = ['apply', '-input=false', '-no-color', '-json', lockArg(opts), planFile];
  const run = await runTofuJson(opts, 'apply', args, { statefulRun: true });
  return { summary: run.summary, outputNames: run.outputNames, warnings: run.warnings };
}

/** Destroys everything in the graph's state: a destroy plan, then its apply. */
export async function destroyGraph(opts: TofuOptions & { readonly planFile?: string }): Promise<ApplyResult & { readonly planned: readonly PlannedResourceChange[] }> {
  const plan = await planGraph({ ...opts, destroy: true, planFile: opts.planFile ?? 'destroy.tfplan' });
  if (!plan.hasChanges) return { summary: plan.summary, outputNames: [], warnings: plan.warnings, planned: [] };
  const applied = await applyPlan({ ...opts, planFile: plan.planFile });
  return { ...applied, planned: plan.changes };
}

/** `tofu output -json`: the root outputs' values. Values may be secret: do not log them. */
export async function readOutputs(opts: TofuOptions): Promise<Record<string, { value: unknown; sensitive: boolean }>> {
  const r = await runTofu(opts, ['output', '-no-color', '-json'], { keepStdout: true, timeoutMs: opts.timeoutMs ?? TEN_MINUTES });
  const parsed = z.record(z.string(), z.object({ value: z.unknown(), sensitive: z.boolean() }).loose()).safeParse(safeJson(r.stdout));
  if (!parsed.success) throw unexpectedOutput('tofu output -json', r);
  return Object.fromEntries(Object.entries(parsed.data).map(([k, v]) => [k, { value: v.value, sensitive: v.sensitive }]));
}

/** `tofu version -json`. */
export async function readTofuVersion(opts: Pick<TofuOptions, 'env' | 'tofuPath' | 'signal'> & { readonly dir?: string }): Promise<{ version: string; providerSelections: Record<string, string> }> {
  const r = await runTofu({ dir: opts.dir ?? process.cwd(), ...opts }, ['version', '-json'], { keepStdout: true, timeoutMs: 30_000 });
  const parsed = z
    .object({ terraform_version: z.string(), provider_selections: z.record(z.string(), z.string()).default({}) })
    .loose()
    .safeParse(safeJson(r.stdout));
  if (!parsed.success) throw unexpectedOutput('tofu version -json', r);
  return { version: parsed.data.terraform_version, providerSelections: parsed.data.provider_selections };
}

// --- internals -------------------------------------------------------------------------

interface JsonRun {
  readonly result: RunResult;
  readonly summary: ChangeSummary | undefined;
  readonly outputNames: readonly string[];
  readonly warnings: readonly TofuDiagnostic[];
}

/** Runs a `-json` tofu command, parses its stream, and turns failure into a TofuError. */
async function runTofuJson(
  opts: TofuOptions,
  verb: string,
  args: readonly string[],
  extra: { readonly okExitCodes?: readonly number[]; readonly timeoutMs?: number; readonly statefulRun?: boolean },
): Promise<JsonRun> {
  const diagnostics: TofuDiagnostic[] = [];
  const failed: string[] = [];
  const interrupts: string[] = [];
  let summary: ChangeSummary | undefined;
  let outputNames: readonly string[] = [];
  let stateDump: unknown;

  const onLine = (line: string) => {
    if (line.trim() === '') return;
    const parsed = parseTofuLine(line);
    const e = parsed.event;
    if (parsed.stateDump !== undefined) stateDump = parsed.stateDump;
    if (e.kind === 'diagnostic') diagnostics.push(e.diagnostic);
    else if (e.kind === 'apply-errored') failed.push(e.address);
    else if (e.kind === 'change-summary') summary = e.summary;
    else if (e.kind === 'outputs') outputNames = e.names;
    else if (e.kind === 'log' && /interrupt/i.test(e.message)) interrupts.push(e.message.trim());
    opts.onEvent?.(e);
  };

  const started = Date.now();
  let result: RunResult | undefined;
  let runError: unknown;
  try {
    result = await runTofu(opts, args, {
      okExitCodes: extra.okExitCodes ?? [0],
      timeoutMs: extra.timeoutMs ?? opts.timeoutMs ?? ONE_HOUR,
      onStdoutLine: onLine,
      keepStdout: false,
      reject: false,
    });
  } catch (err) {
    runError = err;
  }

  // Whatever happened, never leave state lying around readable, and say where it is.
  const stateNotes: string[] = [];
  if (extra.statefulRun) {
    const errored = join(opts.dir, 'errored.tfstate');
    if (changedSince(errored, started)) {
      chmodSync(errored, 0o600);
      stateNotes.push(erroredStateNote(errored, opts.dir));
    }
    if (stateDump !== undefined) stateNotes.push(saveStateDump(stateDump, opts.dir));
  }

  if (runError instanceof InterruptedError) {
    if ((runError.cause as { signal?: string } | undefined)?.signal === 'SIGKILL') {
      throw new InterruptedError(
        [`tofu ${verb} was interrupted in ${opts.dir} and did not stop within ${formatGrace(opts.interruptGraceMs ?? FIVE_MINUTES)}, so it was killed: the state may lack the last changes and the state lock may still be held.`, ...stateNotes].join('\n'),
        { hint: 'release the lock (`deploy state unlock`), then run the command again: it plans from the state that was saved', cause: runError },
      );
    }
    const what = interrupts.length > 0 ? 'tofu stopped after the operations in flight (one interrupt)' : 'tofu stopped';
    const problems = diagnostics.filter((d) => d.severity === 'error' && !/interrupt|cancel/i.test(d.summary));
    const lines = [`tofu ${verb} was interrupted in ${opts.dir}: ${what}${stateNotes.length ? '' : '; the state it reached is saved and the lock released'}.`];
    for (const d of problems.slice(0, 10)) lines.push(`  - ${formatDiagnostic(d)}`);
    lines.push(...stateNotes);
    throw new InterruptedError(lines.join('\n'), {
      hint: stateNotes.length ? 'push the saved state as shown, then run the command again' : 'run the command again to finish (it converges from the saved state)',
      cause: runError,
    });
  }
  if (runError !== undefined) {
    if (stateNotes.length && runError instanceof Error) runError.message += `\n${stateNotes.join('\n')}`;
    throw runError;
  }
  const r = result!;
  const ok = (extra.okExitCodes ?? [0]).includes(r.exitCode) && r.signal === undefined;
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (!ok || stateNotes.length > 0) {
    throw new TofuError(describeFailure(verb, opts.dir, r, errors, failed, stateNotes), errors, failed, {
      hint: stateNotes.length
        ? 'push the saved state as shown before anything else, then run the command again'
        : failureHint(verb, errors),
    });
  }
  return { result: r, summary, outputNames, warnings: diagnostics.filter((d) => d.severity === 'warning') };
}

function describeFailure(verb: string, dir: string, r: RunResult, errors: readonly TofuDiagnostic[], failed: readonly string[], notes: readonly string[]): string {
  const lines: string[] = [];
  const end = r.signal ? `killed by ${r.signal}` : `exit code ${r.exitCode}`;
  const names = [...new Set([...failed, ...errors.map((d) => d.address).filter((a): a is string => !!a)])];
  lines.push(`tofu ${verb} failed in ${dir} (${end})${names.length ? ` at ${names.join(', ')}` : ''}:`);
  for (const d of errors.slice(0, 10)) lines.push(`  - ${formatDiagnostic(d).split('\n').slice(0, 6).join('\n    ')}`);
  if (errors.length > 10) lines.push(`  - ... and ${errors.length - 10} more errors`);
  if (errors.length === 0) {
    // no diagnostics: tofu crashed or printed something else; show its stderr tail
    for (const l of r.tail) lines.push(`  | ${l}`);
  }
  lines.push(...notes);
  return lines.join('\n');
}

function failureHint(verb: string, errors: readonly TofuDiagnostic[]): string {
  if (verb === 'init' && errors.some((d) => /provider|registry|query/i.test(d.summary))) {
    return `the providers must come from the offline mirror: ${INSTALL_HINTS.tofu}; or unset TF_CLI_CONFIG_FILE on a machine with network access`;
  }
  if (errors.some((d) => /state lock|lock/i.test(d.summary))) {
    return 'another run holds the state lock: wait for it, or release a stale lock with `deploy state unlock`';
  }
  return 'fix what the errors above name, then run the command again';
}

/** Runs tofu through the one process wrapper with its environment and interrupt mode. */
async function runTofu(
  opts: TofuOptions,
  args: readonly string[],
  run: {
    readonly okExitCodes?: readonly number[];
    readonly timeoutMs: number;
    readonly onStdoutLine?: (line: string) => void;
    readonly keepStdout: boolean;
    readonly reject?: boolean;
  },
): Promise<RunResult> {
  const merged: Env = { ...process.env, ...opts.env };
  const tofu = opts.tofuPath ?? requireTool('tofu', merged).path;
  const providers = findProviderConfig(merged);
  const env: Record<string, string | undefined> = {
    // plain, non-interactive output, no version checks against the network
    TF_IN_AUTOMATION: '1',
    TF_INPUT: '0',
    CHECKPOINT_DISABLE: '1',
    ...opts.env,
    // Last: a TF_CLI_CONFIG_FILE naming a missing file (some machines export one) would make
    // tofu print a warning on stdout, before its JSON; discovery already ignored it.
    TF_CLI_CONFIG_FILE: providers.kind === 'online' ? undefined : providers.cliConfigFile,
  };
  return runTool(tofu, args, {
    cwd: opts.dir,
    env,
    signal: opts.signal,
    timeoutMs: run.timeoutMs,
    interrupt: 'sigint-once',
    interruptTarget: opts.interruptTarget ?? 'group',
    interruptGraceMs: opts.interruptGraceMs ?? FIVE_MINUTES,
    okExitCodes: run.okExitCodes ?? [0],
    reject: run.reject ?? true,
    keepStdout: run.keepStdout,
    onStdoutLine: run.onStdoutLine,
    // stdout is JSON (it may hold values): error messages quote stderr only
    relevantLine: (line, stream) => stream === 'stderr' && line.trim() !== '',
    installHint: INSTALL_HINTS.tofu,
  });
}

function erroredStateNote(path: string, dir: string): string {
  return (
    `  tofu could not save the state to the backend and wrote it to ${path} (mode 0600; it may hold secrets: do not print or share it).\n` +
    `  When the backend is reachable again, push it with the same backend environment (TF_HTTP_*):\n` +
    `    tofu -chdir=${dir} state push ${path}\n` +
    `  and delete the file once the push succeeded.`
  );
}

/** tofu printed its state because it could not write errored.tfstate: keep it private instead. */
function saveStateDump(state: unknown, dir: string): string {
  const name = `errored-dump-${Date.now()}.tfstate`;
  for (const target of [dir, tmpdir()]) {
    try {
      const path = join(target, name);
      writeFileSync(path, JSON.stringify(state, null, 2), { mode: 0o600, flag: 'wx' });
      return erroredStateNote(path, dir);
    } catch {
      // try the next place
    }
  }
  return '  tofu could not save the state, and it could not be kept in a private file either: the changes of this run are not in the state; import or re-apply them.';
}

function changedSince(path: string, sinceMs: number): boolean {
  try {
    return statSync(path).mtimeMs >= sinceMs - 1000;
  } catch {
    return false;
  }
}

function formatGrace(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)}s` : `${ms}ms`;
}

function resolveIn(dir: string, p: string): string {
  return isAbsolute(p) ? p : join(dir, p);
}

/** The JSON document tofu printed; human warnings printed before it (on stdout) are skipped. */
function safeJson(text: string): unknown {
  const starts = [0, ...[...text.matchAll(/^[{[]/gm)].map((m) => m.index)];
  for (const start of starts) {
    try {
      return JSON.parse(text.slice(start));
    } catch {
      // try the next line that opens a document
    }
  }
  return undefined;
}

function unexpectedOutput(what: string, r: RunResult): ToolError {
  return new ToolError(`${what} printed output this program does not understand (exit code ${r.exitCode})`, {
    hint: `check that the tofu in use is OpenTofu (\`deploy doctor\`); ${INSTALL_HINTS.tofu}`,
  });
}

export type { ChangeAction };

/**
 * plan / apply / destroy over every chosen target: run each, one after the other, and decide
 * the exit code. Returns what each target did; src/cli/report/verb-report.ts says it on stdout.
 */
import { requireAbsoluteFile } from '../config/file-coordinate.js';
import { allowedReplacements } from '../config/allowed-replacements.js';
import { graphsDir, loadTargets, type TargetInputs } from '../config/load-targets.js';
import type { BackendCoordinates } from '../config/backend-coordinates.js';
import { requireStateBackend } from '../config/state-choice.js';
import type { TargetModel } from '../config/target-model.js';
import { ExitCode } from '../errors.js';
import type { NodeCopy } from './guard/node-copies.js';
import { requireRunTools } from '../tools/preflight.js';
import type { RunContext } from './run-context.js';
import { requireKubeconfig } from './kubeconfig-check.js';
import { runTarget } from './target/run-target.js';
import type { Mode, TargetRunResult } from './target/target-types.js';

/** The inputs of plan, apply and destroy: the targets' inputs, the output form, the overrides. */
export interface VerbInputs extends TargetInputs {
  json?: boolean;
  /** plan, apply: nodes whose /var/lib claim may go (src/config/allowed-replacements.ts). */
  allowVolumeReplacement?: string[];
}

/** One target's run, with the nodes another target of the group already runs. */
export interface VerbTargetResult extends TargetRunResult {
  readonly copies: readonly NodeCopy[];
  /** `namespaceManagedBy: "admin"` in the plan: a destroy left the namespace, the admin's. */
  readonly namespaceIsAdmins: boolean;
}

/** What a plan, apply or destroy did: each target run, in order, until the first that failed. */
export interface VerbResult {
  readonly verb: Mode;
  /** 0, or the first failing target's code. */
  readonly exitCode: number;
  /** Every target the run was asked for (some may not have run). */
  readonly chosenTargets: readonly string[];
  readonly targets: readonly VerbTargetResult[];
}

/** Runs `mode` over every chosen target; returns what a run that did not throw did. */
export async function runVerb(mode: Mode, flags: VerbInputs, ctx: RunContext): Promise<VerbResult> {
  // before anything else: a CI runner must not keep its state in a home that may not last;
  // the backend's coordinates parsed once, for every target of the run
  const backend = requireStateBackend(ctx.env);
  const { targets, groupTargets, coordinates: coords } = await loadTargets(flags, ctx);
  const allowVolumeReplacement = allowedReplacements(flags.allowVolumeReplacement, targets);
  // Input first (exit 2), then every program the run needs (exit 3 naming them): both before
  // any lock, cluster read or process.
  // the kubeconfig resolved once for every target of the run (its file absolute: src/paths.ts absoluteFile)
  const kube = await requireKubeconfig(coords.kubeconfig, ctx);
  const tools = requireRunTools(mode, { spire: targets.some((t) => t.spire !== undefined), env: ctx.env });
  const { runIdentity } = await import('../state/run-lock.js');
  const who = runIdentity(ctx.env);
  const logger = ctx.logger();
  const started = Date.now();
  // a line per node, in place on a terminal, plain lines elsewhere (src/workflow/view/)
  const { openRunView } = await import('./view/open-run-view.js');
  const view = await openRunView(ctx.stderr, ctx.env, started);
  const progress = (line: string) => view.note(line);
  // The SPIRE steps' key, by path only: each target's run stages its own copy. Without the
  // SPIRE coordinates a set SSH_PRIVATE_KEY_FILE still serves to retire an earlier hand-off.
  // (the coordinates' paths are absolute already: src/paths.ts absoluteFile)
  const keyText = ctx.env.SSH_PRIVATE_KEY_FILE || undefined;
  const sshPrivateKeyFile = coords.spire?.sshPrivateKeyFile ?? (keyText === undefined ? undefined : requireAbsoluteFile(keyText, ctx, 'SSH_PRIVATE_KEY_FILE'));
  const results: VerbTargetResult[] = [];
  // Targets one after the other: each has its own state and namespace, and a failure of
  // one should be read before the next one changes anything.
  try {
    for (const model of targets) {
      // a destroy makes no copy; plan and apply say which nodes another target already runs
      const copies = mode === 'destroy' ? [] : await nodeCopiesOf(model, groupTargets, mode === 'plan' ? targets : [], backend, ctx, progress);
      const r = await runTarget({ mode, model, tools, graphsDir: graphsDir(flags, ctx), kube, sshPrivateKeyFile, allowVolumeReplacement, env: ctx.env, backend, who, logger, signal: ctx.signal, progress, view, held: ctx.held });
      results.push({ ...r, copies, namespaceIsAdmins: model.namespaceManagedBy === 'admin' });
      if (r.exitCode !== ExitCode.ok) break;
    }
  } finally {
    // the rows stay on the screen, above the summary (and above an error's words)
    view.close();
  }
  const exitCode = results.find((r) => r.exitCode !== ExitCode.ok)?.exitCode ?? ExitCode.ok;
  return { verb: mode, exitCode, chosenTargets: targets.map((t) => t.target), targets: results };
}

/**
 * The nodes of `model` that another target of the group runs (read from its state on the
 * backend) or, in a plan, would run (`planned`: the run's targets). Each is said on stderr
 * at once, before tofu starts, and returned for the summary.
 */
async function nodeCopiesOf(model: TargetModel, groupTargets: readonly string[], planned: readonly TargetModel[], backend: BackendCoordinates, ctx: RunContext, progress: (line: string) => void): Promise<NodeCopy[]> {
  const { findNodeCopies } = await import('./guard/node-copies.js');
  const { openStateSource } = await import('../state/source/open-state-source.js');
  const { DataDirSource } = await import('../state/source/data-dir-source.js');
  const source = openStateSource(backend, ctx.signal);
  try {
    // no database yet (a first run on this machine): no state to read, and none to create
    const nothingKept = source instanceof DataDirSource && !source.hasData;
    const copies = await findNodeCopies({
      model,
      otherTargets: nothingKept ? [] : groupTargets.filter((t) => t !== model.target),
      plannedAlongside: planned.filter((t) => t.target !== model.target),
      source,
      onUnreadable: (key) => progress(`[${model.target}] warning: the state ${key} is not a state of deploy's graphs; not checked for copies of this target's nodes`),
    });
    for (const c of copies) progress(`[${model.target}] warning: ${c.words}`);
    return copies;
  } finally {
    source.close();
  }
}


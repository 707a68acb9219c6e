/**
 * plan / apply / destroy over every chosen target: run each, print the per-node summary
 * (text on stdout, or one JSON document with --json), and decide the exit code.
 */
import { resolve } from 'node:path';
import { allowedReplacements } from '../config/allowed-replacements.js';
import { graphsDir, loadTargets, type TargetInputs } from '../config/load-targets.js';
import { requireStateChoice } from '../config/state-choice.js';
import type { TargetModel } from '../config/target-model.js';
import { ExitCode } from '../errors.js';
import type { NodeCopy } from './node-copies.js';
import { formatTargetSummary } from './plan-summary.js';
import { heldBackLine } from './held-back.js';
import { requireRunTools } from '../tools/preflight.js';
import type { RunContext } from './run-context.js';
import { requireKubeconfig, runTarget, type Mode, type TargetRunResult } from './run-target.js';

/** The inputs of plan, apply and destroy: the targets' inputs, the output form, the overrides. */
export interface VerbInputs extends TargetInputs {
  json?: boolean;
  /** plan, apply: nodes whose /var/lib claim may go (src/config/allowed-replacements.ts). */
  allowVolumeReplacement?: string[];
}

/** Runs `mode` over every chosen target; returns the exit code of a run that did not throw. */
export async function runVerb(mode: Mode, flags: VerbInputs, ctx: RunContext): Promise<number> {
  // before anything else: a CI runner must not keep its state in a home that may not last
  requireStateChoice(ctx.env);
  const { targets, groupTargets, coordinates: coords } = await loadTargets(flags, ctx);
  const allowVolumeReplacement = allowedReplacements(flags.allowVolumeReplacement, targets);
  // Input first (exit 2), then every program the run needs (exit 3 naming them): both before
  // any lock, cluster read or process.
  const kubeconfig = await requireKubeconfig(coords.kubeconfig);
  const tools = requireRunTools(mode, { spire: targets.some((t) => t.spire !== undefined), env: ctx.env });
  const { runIdentity } = await import('../state/run-lock.js');
  const who = runIdentity(ctx.env);
  const logger = ctx.logger();
  const started = Date.now();
  // a line per node, in place on a terminal, plain lines elsewhere (src/workflow/view/)
  const { openRunView } = await import('./view/run-view.js');
  const view = await openRunView(ctx.stderr, ctx.env, started);
  const progress = (line: string) => view.note(line);
  // The SPIRE steps' key, by path only: each target's run stages its own copy. Without the
  // SPIRE coordinates a set SSH_PRIVATE_KEY_FILE still serves to retire an earlier hand-off.
  const keyText = coords.spire?.sshPrivateKeyFile ?? (ctx.env.SSH_PRIVATE_KEY_FILE || undefined);
  const sshPrivateKeyFile = keyText === undefined ? undefined : resolve(ctx.cwd, keyText);
  const results: (TargetRunResult & { copies: readonly NodeCopy[] })[] = [];
  // Targets one after the other: each has its own state and namespace, and a failure of
  // one should be read before the next one changes anything.
  try {
    for (const model of targets) {
      // a destroy makes no copy; plan and apply say which nodes another target already runs
      const copies = mode === 'destroy' ? [] : await nodeCopiesOf(model, groupTargets, mode === 'plan' ? targets : [], ctx, progress);
      const r = await runTarget({ mode, model, tools, graphsDir: graphsDir(flags, ctx), kubeconfig, sshPrivateKeyFile, allowVolumeReplacement, env: ctx.env, who, logger, signal: ctx.signal, progress, view, held: ctx.held });
      results.push({ ...r, copies });
      if (r.exitCode !== ExitCode.ok) break;
    }
  } finally {
    // the rows stay on the screen, above the summary (and above an error's words)
    view.close();
  }
  const ran = results.map((r) => r.summary.target);
  const notRun = targets.map((t) => t.target).filter((t) => !ran.includes(t));
  const exitCode = results.find((r) => r.exitCode !== ExitCode.ok)?.exitCode ?? ExitCode.ok;
  if (flags.json) {
    ctx.stdout.write(
      JSON.stringify(
        {
          verb: mode,
          exitCode,
          chosenTargets: targets.map((t) => t.target),
          targets: results.map((r) => ({ ...r.summary, nodeNames: r.nodeNames, graphDir: r.graphDir, applied: r.applied, rollouts: r.rollouts, nodeCopies: r.copies })),
        },
        null,
        2,
      ) + '\n',
    );
  } else {
    const { formatRolloutSummary } = await import('../rollout/report-format.js');
    for (const r of results) {
      ctx.stdout.write(formatTargetSummary(r.summary) + '\n');
      for (const c of r.copies) ctx.stdout.write(`  warning: ${c.words}\n`);
      if (mode === 'apply' && r.applied) ctx.stdout.write(formatRolloutSummary(r.rollouts).replace(/^/gm, '  ').replace(/ +$/gm, ''));
      for (const n of r.summary.nodes) if (n.heldBackBy !== undefined) ctx.stdout.write(`  ${heldBackLine(r.summary.namespace, n.node, n.heldBackBy, n.heldBackThrough)}\n`);
      if (mode === 'destroy' && r.applied) ctx.stdout.write(targets.find((t) => t.target === r.summary.target)?.namespaceManagedBy === 'admin' ? `  destroyed: everything deploy made in namespace ${r.summary.namespace}; the namespace stays, it is the admin's (namespaceManagedBy "admin"; the images stay in the registry)\n` : `  destroyed: namespace ${r.summary.namespace} and everything in it (the images stay in the registry)\n`);
    }
    const stopped = notRun.length > 0 ? ` (the run stopped at ${ran.at(-1)}; not run: ${notRun.join(', ')})` : '';
    ctx.stdout.write(`targets: ${ran.join(', ')}${stopped}\n`);
  }
  return exitCode;
}

/**
 * The nodes of `model` that another target of the group runs (read from its state on the
 * backend) or, in a plan, would run (`planned`: the run's targets). Each is said on stderr
 * at once, before tofu starts, and returned for the summary.
 */
async function nodeCopiesOf(model: TargetModel, groupTargets: readonly string[], planned: readonly TargetModel[], ctx: RunContext, progress: (line: string) => void): Promise<NodeCopy[]> {
  const { findNodeCopies } = await import('./node-copies.js');
  const { openStateSource } = await import('../state/state-source.js');
  const { DataDirSource } = await import('../state/data-dir-source.js');
  const source = openStateSource(ctx.env, ctx.signal);
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

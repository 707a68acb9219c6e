/**
 * What `deploy plan`, `apply` and `destroy` say on stdout: per target its summary per node,
 * the nodes another target already runs, the rollouts (apply) and the nodes held back, what a
 * destroy removed; then the targets run. With --json, one document instead.
 */
import { formatRolloutSummary } from '../../rollout/report-format.js';
import { heldBackLine } from '../../workflow/summary/held-back-nodes.js';
import { formatTargetSummary } from '../../workflow/summary/plan-summary.js';
import { groupSetBackLine } from '../../workflow/target/group-rollback.js';
import type { VerbResult } from '../../workflow/run-verb.js';
import type { CliContext } from '../context.js';

export function reportVerb(ctx: Pick<CliContext, 'stdout'>, result: VerbResult, json: boolean | undefined): void {
  const { verb: mode, targets: results } = result;
  if (json) {
    ctx.stdout.write(
      JSON.stringify(
        {
          verb: mode,
          exitCode: result.exitCode,
          chosenTargets: result.chosenTargets,
          targets: results.map((r) => ({ ...r.summary, nodeNames: r.nodeNames, graphDir: r.graphDir, applied: r.applied, rollouts: r.rollouts, ...(r.groupRollback ? { groupRollback: r.groupRollback } : {}), nodeCopies: r.copies })),
        },
        null,
        2,
      ) + '\n',
    );
    return;
  }
  for (const r of results) {
    ctx.stdout.write(formatTargetSummary(r.summary) + '\n');
    for (const c of r.copies) ctx.stdout.write(`  warning: ${c.words}\n`);
    if (mode === 'apply' && r.applied) ctx.stdout.write(formatRolloutSummary(r.rollouts).replace(/^/gm, '  ').replace(/ +$/gm, ''));
    for (const n of r.groupRollback ?? []) ctx.stdout.write(`  ${groupSetBackLine(n)}\n`);
    for (const n of r.summary.nodes) if (n.heldBackBy !== undefined) ctx.stdout.write(`  ${heldBackLine(r.summary.namespace, n.node, n.heldBackBy, n.heldBackThrough)}\n`);
    if (mode === 'destroy' && r.applied) ctx.stdout.write(r.namespaceIsAdmins ? `  destroyed: everything deploy made in namespace ${r.summary.namespace}; the namespace stays, it is the admin's (namespaceManagedBy "admin"; the images stay in the registry)\n` : `  destroyed: namespace ${r.summary.namespace} and everything in it (the images stay in the registry)\n`);
  }
  const ran = results.map((r) => r.summary.target);
  const notRun = result.chosenTargets.filter((t) => !ran.includes(t));
  const stopped = notRun.length > 0 ? ` (the run stopped at ${ran.at(-1)}; not run: ${notRun.join(', ')})` : '';
  ctx.stdout.write(`targets: ${ran.join(', ')}${stopped}\n`);
}

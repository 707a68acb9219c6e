/**
 * One target through OpenTofu, as a pipeline: its session (target-session.ts: graph, backend,
 * lock, SPIRE key) -> planTarget (plan-target.ts: verified, scoped or full) -> applyTarget
 * (apply-target.ts) when an apply or destroy has changes to make. Each verb calls this with its
 * own mode; nothing here exits.
 */
import { ExitCode } from '../../errors.js';
import { applyTarget } from './apply-target.js';
import { planTarget } from './plan-target.js';
import { loadTargetParts, type TargetParts } from './target-wiring.js';
import type { TargetRunOptions, TargetRunResult } from './target-types.js';
import { withTargetSession } from './target-session.js';

/** Runs one target; `parts`: the real collaborators unless a test gives its own. */
export async function runTarget(opts: TargetRunOptions, parts?: TargetParts): Promise<TargetRunResult> {
  const using = parts ?? (await loadTargetParts());
  return withTargetSession(using, opts, async (session) => {
    const plan = await planTarget(using, session, opts);
    if (plan.toApply === undefined) {
      return { summary: plan.summary, rollouts: [], applied: false, nodeNames: plan.nodeNames, exitCode: ExitCode.ok, graphDir: session.graphDir };
    }
    return applyTarget(using, session, plan.toApply, opts);
  });
}

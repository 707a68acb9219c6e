/**
 * After an apply whose rollout of some node failed: the nodes that come after it (`after` in
 * the plan, or a later wave of --max-unavailable) and had a change planned were not changed, since tofu does not apply a resource
 * whose dependency failed. Each is marked with the failed node it waited for, so the summary
 * says why its change is not made (and the next apply makes it, once that node is fixed).
 */
import { heldBackBy } from '../../config/order-rules.js';
import type { TargetModel } from '../../config/target-model.js';
import type { RolloutReport } from '../../rollout/report.js';
import { touchesPod, type NodeSummary, type TargetSummary } from './plan-summary.js';

export function markHeldBack(model: TargetModel, summary: TargetSummary, rollouts: readonly RolloutReport[]): TargetSummary {
  const failed = new Set(rollouts.filter((r) => r.outcome !== 'ready').map((r) => r.node));
  if (failed.size === 0) return summary;
  const reported = new Set(rollouts.map((r) => r.node));
  const held = heldBackBy(model.nodes, failed, model.waveSize);
  return {
    ...summary,
    nodes: summary.nodes.map((n) => {
      const h = held.get(n.node);
      return h !== undefined && touchesPod(n) && !reported.has(n.node) ? { ...n, heldBackBy: h.by, heldBackThrough: h.through } : n;
    }),
  };
}

/** The summary's line for a node held back (under the rollout lines of `deploy apply`). */
export function heldBackLine(namespace: string, node: string, by: string, through: 'after' | 'wave' = 'after'): string {
  const why = through === 'after' ? `it comes after ${by}, whose rollout failed` : `its wave starts only after the wave of ${by}, whose rollout failed (--max-unavailable; no new wave starts after a failure)`;
  return `${namespace}/${node}: not changed: ${why}; its Deployment and pod are as they were, and the next apply makes its change once ${by} is ready`;
}

/** What a node's Deployment waits for in the live view, when it waits: `db (after)`, `wave 1 of 3`. */
export function waitWords(n: Pick<NodeSummary, 'after' | 'wave'>): string | undefined {
  const parts: string[] = [];
  if (n.after !== undefined && n.after.length > 0) parts.push(`${n.after.join(' and ')} (after)`);
  if (n.wave !== undefined && n.wave.n > 1) parts.push(`wave ${n.wave.n - 1} of ${n.wave.of}`);
  return parts.length === 0 ? undefined : parts.join(' and ');
}

/**
 * After an apply whose rollout of some node failed: the nodes that come after it (`after` in
 * the plan) and had a change planned were not changed, since tofu does not apply a resource
 * whose dependency failed. Each is marked with the failed node it waited for, so the summary
 * says why its change is not made (and the next apply makes it, once that node is fixed).
 */
import { heldBackBy } from '../config/order-rules.js';
import type { TargetModel } from '../config/target-model.js';
import type { RolloutReport } from '../rollout/report.js';
import { touchesPod, type TargetSummary } from './plan-summary.js';

export function markHeldBack(model: TargetModel, summary: TargetSummary, rollouts: readonly RolloutReport[]): TargetSummary {
  const failed = new Set(rollouts.filter((r) => r.outcome !== 'ready').map((r) => r.node));
  if (failed.size === 0 || !model.nodes.some((n) => (n.after ?? []).length > 0)) return summary;
  const reported = new Set(rollouts.map((r) => r.node));
  const held = heldBackBy(model.nodes, failed);
  return {
    ...summary,
    nodes: summary.nodes.map((n) => {
      const by = held.get(n.node);
      return by !== undefined && touchesPod(n) && !reported.has(n.node) ? { ...n, heldBackBy: by } : n;
    }),
  };
}

/** The summary's line for a node held back (under the rollout lines of `deploy apply`). */
export function heldBackLine(namespace: string, node: string, by: string): string {
  return `${namespace}/${node}: not changed: it comes after ${by}, whose rollout failed; its Deployment and pod are as they were, and the next apply makes its change once ${by} is ready`;
}

/**
 * The order between nodes (`after` in the group plan, issue 31): which orders the method can
 * keep, and the order the graph makes the nodes in.
 *
 * Kubernetes has no order between workloads, so the graph keeps it (seed 002, section 7): a
 * node's Deployment depends on the rollout step of every node it comes after, and tofu does
 * not apply a resource whose dependency failed. An order the graph cannot keep is refused
 * before anything runs, never dropped:
 * - a name that is not a node of the group, the node itself, or a node the submission turns off;
 * - a cycle (named whole: `db -> app -> db`);
 * - a node of another target: each target is its own graph, state and run (possibly its own
 *   CD job), so no run can wait for a rollout that another target's run does. Refused only for
 *   the targets a run chooses: the same plan keeps the order in `all`, which has every node.
 */
import type { InputIssue } from '../errors.js';
import type { GroupPlan } from './plan-schema.js';

type At = (path: readonly PropertyKey[]) => string;

/** Names that are not nodes, a node after itself, after a node turned off, and every cycle. */
export function orderProblems(plan: GroupPlan, at: At): InputIssue[] {
  const issues: InputIssue[] = [];
  const off = new Set(plan.submission?.turnsOff ?? []);
  for (const [name, node] of Object.entries(plan.nodes)) {
    node.after.forEach((dep, i) => {
      const where = at(['nodes', name, 'after', i]);
      if (dep === name) issues.push({ where, message: `node "${name}" cannot come after itself: remove "${dep}" from its after` });
      else if (!(dep in plan.nodes)) issues.push({ where, message: `"${dep}" is not a node of group "${plan.group}": name a node of this plan, or remove it from ${name}'s after` });
      else if (off.has(dep) && !off.has(name)) issues.push({ where, message: `node "${name}" comes after "${dep}", which submission "${plan.submission?.id}" turns off: nothing would ever be ready for ${name} to wait for; remove "${dep}" from its after, or keep ${dep}` });
    });
  }
  for (const cycle of cycles(plan)) {
    issues.push({ where: at(['nodes', cycle[0]!, 'after']), message: `the nodes' order has a cycle: ${[...cycle, cycle[0]].join(' -> ')} (each comes after the next): no node of it could ever start; remove one of these after entries` });
  }
  return issues;
}

/** Each node of a target that comes after a node outside it (that target's run cannot wait for it). */
export function targetOrderProblems(plan: GroupPlan, target: string, nodeNames: readonly string[], at: At): InputIssue[] {
  const inTarget = new Set(nodeNames);
  // a node turned off is orderProblems' to name
  const off = new Set(plan.submission?.turnsOff ?? []);
  const issues: InputIssue[] = [];
  for (const name of nodeNames) {
    plan.nodes[name]!.after.forEach((dep, i) => {
      if (!inTarget.has(dep) && dep in plan.nodes && !off.has(dep)) {
        issues.push({
          where: at(['nodes', name, 'after', i]),
          message: `node "${name}" comes after "${dep}", which is not in target "${target}": each target is its own graph and run, so its run cannot wait for ${dep}'s rollout; give ${dep} the same app, or deploy target "all", which has every node`,
        });
      }
    });
  }
  return issues;
}

/**
 * The cycles of the `after` relation among the plan's nodes, each once, each starting at its
 * smallest name (so the message does not depend on where the search began).
 */
function cycles(plan: GroupPlan): string[][] {
  const found = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (name: string) => {
    state.set(name, 'open');
    path.push(name);
    for (const dep of plan.nodes[name]?.after ?? []) {
      if (!(dep in plan.nodes) || dep === name) continue;
      if (state.get(dep) === 'open') {
        const cycle = path.slice(path.indexOf(dep));
        const start = cycle.indexOf([...cycle].sort()[0]!);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        found.set(rotated.join(' '), rotated);
      } else if (state.get(dep) === undefined) visit(dep);
    }
    path.pop();
    state.set(name, 'done');
  };
  for (const name of Object.keys(plan.nodes).sort()) if (state.get(name) === undefined) visit(name);
  return [...found.values()];
}

/**
 * The nodes in an order where each comes after those it names: the given order (by name) where
 * the `after` relation allows it. Assumes no cycle (orderProblems refused them).
 */
export function rolloutOrder<T extends { readonly name: string; readonly after?: readonly string[] }>(nodes: readonly T[]): T[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const placed = new Set<string>();
  const out: T[] = [];
  const place = (n: T) => {
    if (placed.has(n.name)) return;
    placed.add(n.name);
    for (const dep of n.after ?? []) {
      const d = byName.get(dep);
      if (d !== undefined) place(d);
    }
    out.push(n);
  };
  for (const n of nodes) place(n);
  return out;
}

/**
 * The nodes that a failed node holds back: every node that comes after it, directly or through
 * another node, as `node -> the failed node it waited for` (the first found along its order).
 */
export function heldBackBy<T extends { readonly name: string; readonly after?: readonly string[] }>(nodes: readonly T[], failed: ReadonlySet<string>): Map<string, string> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const memo = new Map<string, string | undefined>();
  const blocker = (name: string, seen: Set<string>): string | undefined => {
    if (memo.has(name)) return memo.get(name);
    if (seen.has(name)) return undefined;
    seen.add(name);
    let found: string | undefined;
    for (const dep of byName.get(name)?.after ?? []) {
      found = failed.has(dep) ? dep : blocker(dep, seen);
      if (found !== undefined) break;
    }
    memo.set(name, found);
    return found;
  };
  const held = new Map<string, string>();
  for (const n of nodes) {
    if (failed.has(n.name)) continue;
    const b = blocker(n.name, new Set());
    if (b !== undefined) held.set(n.name, b);
  }
  return held;
}

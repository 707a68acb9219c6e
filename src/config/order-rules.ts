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

type Ordered = { readonly name: string; readonly after?: readonly string[] };

/**
 * The waves of a target (--max-unavailable): its nodes in rollout order, cut into runs of
 * `size`. Every node of a wave waits for the rollout of each node of the wave before it, so at
 * most `size` nodes are between "old pod stopped" and "new pod Ready" at once. A wave is cut
 * from all the target's nodes, not only the changed ones: the graph is made before the plan
 * knows which change (a wave whose nodes do not change passes at once).
 * No size: one wave.
 */
export function waves<T extends Ordered>(nodes: readonly T[], size: number | undefined): T[][] {
  const ordered = rolloutOrder(nodes);
  if (size === undefined || size >= ordered.length) return [ordered];
  const out: T[][] = [];
  for (let i = 0; i < ordered.length; i += size) out.push(ordered.slice(i, i + size));
  return out;
}

/** What each node waits for: the nodes it comes after, and the nodes of the wave before its own. */
export function waitsFor<T extends Ordered>(nodes: readonly T[], size: number | undefined): Map<string, { after: readonly string[]; previousWave: readonly string[]; wave: number; waves: number }> {
  const cut = waves(nodes, size);
  const out = new Map<string, { after: readonly string[]; previousWave: readonly string[]; wave: number; waves: number }>();
  cut.forEach((wave, i) => {
    const previousWave = i === 0 ? [] : cut[i - 1]!.map((n) => n.name);
    for (const n of wave) out.set(n.name, { after: n.after ?? [], previousWave, wave: i + 1, waves: cut.length });
  });
  return out;
}

/** Why a node's change was not made: the failed node it waited for, through `after` alone or through a wave. */
export interface HeldBack {
  readonly by: string;
  readonly through: 'after' | 'wave';
}

/**
 * The nodes that a failed node holds back: every node that waits for it, directly or through
 * another node (its `after`, or the waves of `size`), with the failed node it waited for.
 */
export function heldBackBy<T extends Ordered>(nodes: readonly T[], failed: ReadonlySet<string>, size?: number): Map<string, HeldBack> {
  const waits = waitsFor(nodes, size);
  const search = (name: string, edges: (n: string) => readonly string[]): string | undefined => {
    const seen = new Set<string>();
    const stack = [...edges(name)];
    while (stack.length > 0) {
      const next = stack.shift()!;
      if (seen.has(next)) continue;
      seen.add(next);
      if (failed.has(next)) return next;
      stack.push(...edges(next));
    }
    return undefined;
  };
  const afterOnly = (n: string) => waits.get(n)?.after ?? [];
  const all = (n: string) => [...(waits.get(n)?.after ?? []), ...(waits.get(n)?.previousWave ?? [])];
  const held = new Map<string, HeldBack>();
  for (const n of nodes) {
    if (failed.has(n.name)) continue;
    const byAfter = search(n.name, afterOnly);
    if (byAfter !== undefined) held.set(n.name, { by: byAfter, through: 'after' });
    else {
      const byWave = search(n.name, all);
      if (byWave !== undefined) held.set(n.name, { by: byWave, through: 'wave' });
    }
  }
  return held;
}

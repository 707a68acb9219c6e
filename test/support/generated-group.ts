/**
 * A generated group plan and its target, for properties over many graphs (the orders between
 * nodes, the scoped graph): 2-8 nodes, a random `after` order without cycles, and
 * --max-unavailable either unset or a random size, all drawn from `next` (seeded-random.ts).
 */
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../src/config/load.js';
import type { TargetModel } from '../../src/config/target-model.js';

const PLAN_FILE = '/plans/group.json';

export interface GeneratedGroup {
  /** The plan's nodes, as the plan file holds them. */
  readonly nodes: Record<string, { readonly after?: readonly string[] } & Record<string, unknown>>;
  readonly maxUnavailable: number | undefined;
  readonly target: TargetModel;
  /** The plan and its order in a line, for a failure's message. */
  readonly said: string;
}

export function generatedGroup(next: () => number): GeneratedGroup {
  const count = 2 + Math.floor(next() * 7);
  const names = Array.from({ length: count }, (_, i) => `n${i}`);
  // a random order without cycles: a node only comes after nodes earlier in a shuffle
  const shuffled = [...names].sort(() => next() - 0.5);
  const nodes: GeneratedGroup['nodes'] = {};
  shuffled.forEach((name, i) => {
    const after = shuffled.slice(0, i).filter(() => next() < 0.2);
    nodes[name] = { image: { archive: `/images/${name}.tar`, tag: `t${Math.floor(next() * 3)}` }, apps: [], ...(after.length > 0 ? { after } : {}) };
  });
  const maxUnavailable = next() < 0.5 ? undefined : 1 + Math.floor(next() * count);
  const plan = { version: 1, group: 'g1', nodes, roster: { spiffeProvider: null }, ...(maxUnavailable !== undefined ? { maxUnavailable } : {}) };
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000' }, process.cwd());
  const [target] = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, ['all']);
  const said = `maxUnavailable ${maxUnavailable}, after ${JSON.stringify(Object.fromEntries(Object.entries(nodes).map(([n, v]) => [n, v.after ?? []])))}`;
  return { nodes, maxUnavailable, target: target!, said };
}

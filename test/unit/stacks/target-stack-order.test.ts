/**
 * The orders between nodes in a target's graph, as a property over generated group plans (law
 * 16): a node's resources come after another node's only where the operator asked for it (its
 * `after`, transitively) or the waves of --max-unavailable put it; nothing else of the graph
 * (the namespace, a push) joins two nodes. tofu keeps each resource's transitive dependencies
 * in the state, so every order between nodes is bytes in every later state, and an order that
 * joins them all made the state grow with the square of the group (bench/README.md). The seed is
 * printed; DEPLOY_TEST_SEED=<n> runs that one again.
 */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { waitsFor } from '../../../src/config/order-rules.js';
import { graphPartOf } from '../../../src/contract/graph/graph-ids.js';
import { renderGraph } from '../../../src/graph/render.js';
import { seededRandom } from '../../support/seeded-random.js';

const SEED = Number(process.env.DEPLOY_TEST_SEED ?? Date.now() % 1_000_000_007);
const PLANS = 30;
const PLAN_FILE = '/plans/group.json';

/** Every block of the graph by address, with the addresses it names (depends_on, references, replace_triggered_by). */
function edgesOf(json: any): Map<string, Set<string>> {
  const blocks = new Map<string, unknown>();
  for (const kind of ['resource', 'data'] as const) {
    for (const [type, byName] of Object.entries<any>(json[kind] ?? {})) {
      for (const [name, block] of Object.entries<any>(byName)) blocks.set(`${kind === 'data' ? 'data.' : ''}${type}.${name}`, block);
    }
  }
  const edges = new Map<string, Set<string>>();
  for (const [address, block] of blocks) {
    const { ['//']: _meta, ...body } = block as Record<string, unknown>;
    // every word shaped as an address (`type.name`, `data.type.name`), anywhere in the block: in
    // depends_on and replace_triggered_by bare, in an expression after `${`; kept when it is a block
    const words = JSON.stringify(body).match(/(?<![A-Za-z0-9_.-])(?:data\.)?[a-z][a-z0-9_]*\.[A-Za-z0-9_-]+/g) ?? [];
    edges.set(address, new Set(words.filter((w) => w !== address && blocks.has(w))));
  }
  return edges;
}

function ancestors(edges: Map<string, Set<string>>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(edges.get(from) ?? [])];
  while (stack.length > 0) {
    const a = stack.pop()!;
    if (seen.has(a)) continue;
    seen.add(a);
    stack.push(...(edges.get(a) ?? []));
  }
  return seen;
}

/** The nodes `name` waits for, directly or through another node. */
function waitedFor(waits: ReturnType<typeof waitsFor>, name: string): Set<string> {
  const out = new Set<string>();
  const stack = [name];
  while (stack.length > 0) {
    const w = waits.get(stack.pop()!)!;
    for (const d of [...w.after, ...w.previousWave]) if (!out.has(d)) stack.push((out.add(d), d));
  }
  return out;
}

describe('the orders between the nodes of a graph (generated plans)', () => {
  it('a node comes after another only through its after or a wave, never through the namespace or a push', () => {
    console.log(`target-stack-order: seed ${SEED} (DEPLOY_TEST_SEED=${SEED} runs it again)`);
    const next = seededRandom(SEED);
    for (let p = 0; p < PLANS; p++) {
      const why = `seed ${SEED}, plan ${p}`;
      const count = 2 + Math.floor(next() * 7);
      const names = Array.from({ length: count }, (_, i) => `n${i}`);
      // a random order without cycles: a node only comes after nodes earlier in a shuffle
      const shuffled = [...names].sort(() => next() - 0.5);
      const nodes: Record<string, any> = {};
      shuffled.forEach((name, i) => {
        const after = shuffled.slice(0, i).filter(() => next() < 0.2);
        nodes[name] = { image: { archive: `/images/${name}.tar`, tag: `t${Math.floor(next() * 3)}` }, apps: [], ...(after.length > 0 ? { after } : {}) };
      });
      const maxUnavailable = next() < 0.5 ? undefined : 1 + Math.floor(next() * count);
      const plan = { version: 1, group: 'g1', nodes, roster: { spiffeProvider: null }, ...(maxUnavailable !== undefined ? { maxUnavailable } : {}) };
      const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000' }, process.cwd());
      const [target] = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, ['all']);
      const json = JSON.parse(renderGraph(target!));
      const edges = edgesOf(json);
      const waits = waitsFor(target!.nodes, target!.waveSize);
      for (const [address] of edges) {
        const nodesBefore = new Set([...ancestors(edges, address)].flatMap((a) => {
          const g = graphPartOf(a);
          return g?.scope === 'node' ? [g.node] : [];
        }));
        const g = graphPartOf(address);
        const own = g?.scope === 'node' ? g.node : undefined;
        if (own !== undefined) nodesBefore.delete(own);
        // a node's Deployment and rollout step wait for what it waits for; nothing else waits for a node
        const expected = own !== undefined && g?.scope === 'node' && (g.part === 'deployment' || g.part === 'rollout') ? waitedFor(waits, own) : new Set<string>();
        expect([...nodesBefore].sort(), `${why}: ${address} (maxUnavailable ${maxUnavailable}, after ${JSON.stringify(Object.fromEntries(Object.entries(nodes).map(([n, v]) => [n, v.after ?? []])))})`).toEqual([...expected].sort());
      }
    }
  });
});

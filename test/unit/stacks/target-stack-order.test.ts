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
import { waitsFor } from '../../../src/config/order-rules.js';
import { graphPartOf } from '../../../src/contract/graph/graph-ids.js';
import { graphReferences } from '../../../src/contract/graph/graph-references.js';
import { renderGraph } from '../../../src/graph/render.js';
import { generatedGroup } from '../../support/generated-group.js';
import { seededRandom } from '../../support/seeded-random.js';

const SEED = Number(process.env.DEPLOY_TEST_SEED ?? Date.now() % 1_000_000_007);
const PLANS = 30;

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
      const { target, said } = generatedGroup(next);
      const edges = graphReferences(JSON.parse(renderGraph(target)));
      const waits = waitsFor(target.nodes, target.waveSize);
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
        expect([...nodesBefore].sort(), `${why}: ${address} (${said})`).toEqual([...expected].sort());
      }
    }
  });
});

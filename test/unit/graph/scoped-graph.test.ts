/**
 * The scoped graph (src/graph/scoped-graph.ts) as a property over generated groups and roots:
 * it holds every root, every block a kept block names (closed: tofu finds every block it reads),
 * no block that neither is a root nor is named by a kept one (nothing else of the group), each
 * block as the whole graph has it, and every other part of the graph whole. That tofu makes the
 * same plan of it is tested against the real tofu and cluster: test/e2e/deploy-scoped-graph.test.ts.
 * The seed is printed; DEPLOY_TEST_SEED=<n> runs that one again.
 */
import { describe, expect, it } from 'vitest';
import { graphPartOf } from '../../../src/contract/graph/graph-ids.js';
import { graphBlocks, graphReferences, referencesIn } from '../../../src/contract/graph/graph-references.js';
import type { GraphDocument } from '../../../src/contract/graph/graph-document.js';
import { renderGraph } from '../../../src/graph/render.js';
import { scopedGraph } from '../../../src/graph/scoped-graph.js';
import { generatedGroup } from '../../support/generated-group.js';
import { seededRandom } from '../../support/seeded-random.js';

const SEED = Number(process.env.DEPLOY_TEST_SEED ?? Date.now() % 1_000_000_007);
const GROUPS = 30;

describe('the scoped graph (generated groups and roots)', () => {
  it('holds the roots and exactly what they name, transitively, each block as the whole graph has it', () => {
    console.log(`scoped-graph: seed ${SEED} (DEPLOY_TEST_SEED=${SEED} runs it again)`);
    const next = seededRandom(SEED);
    for (let p = 0; p < GROUPS; p++) {
      const { target, said } = generatedGroup(next);
      const whole = JSON.parse(renderGraph(target)) as GraphDocument;
      const blocks = graphBlocks(whole);
      const addresses = [...blocks.keys()];
      // roots as a scoped plan has them: all of some nodes' resources, and now and then one block alone, or none
      const nodes = target.nodes.map((n) => n.name).filter(() => next() < 0.4);
      const roots = addresses.filter((a) => {
        const g = graphPartOf(a.replace(/^data\./, ''));
        return (g?.scope === 'node' && nodes.includes(g.node)) || next() < 0.03;
      });
      // and an address of the state alone (a node removed) now and then: it needs no block
      if (next() < 0.3) roots.push('kubernetes_manifest.node-gone_deployment_0A1B2C3D');
      const why = `seed ${SEED}, group ${p} (${said}), roots ${roots.join(' ')}`;
      const scoped = scopedGraph(whole, roots);
      const kept = graphBlocks(scoped);
      const keptRefs = graphReferences(scoped);
      const named = new Set([...keptRefs.values()].flatMap((r) => [...r]));
      const { resource: _r, data: _d, ...rest } = whole;
      const fromRest = referencesIn(rest, blocks);
      for (const root of roots) if (blocks.has(root)) expect(kept.has(root), `${why}: root ${root} left out`).toBe(true);
      for (const [address, block] of kept) {
        // as the whole graph has it, and closed: whatever it names is kept
        expect(block, `${why}: ${address} changed`).toEqual(blocks.get(address));
        for (const r of referencesIn(block, blocks)) expect(kept.has(r), `${why}: ${address} names ${r}, left out`).toBe(true);
        // and nothing more: a root, named by a kept block, or named by the rest of the graph
        expect(roots.includes(address) || named.has(address) || fromRest.has(address), `${why}: ${address} kept, but nothing asks for it`).toBe(true);
      }
      for (const key of Object.keys(rest)) expect((scoped as Record<string, unknown>)[key], `${why}: ${key}`).toEqual((whole as Record<string, unknown>)[key]);
    }
  });

  it('GIVEN roots that name every node THEN the scoped graph is the whole graph', () => {
    const { target } = generatedGroup(seededRandom(SEED));
    const whole = JSON.parse(renderGraph(target)) as GraphDocument;
    expect(scopedGraph(whole, [...graphBlocks(whole).keys()])).toEqual(whole);
  });

  it('GIVEN no root THEN it keeps only what the rest of the graph names', () => {
    const { target } = generatedGroup(seededRandom(SEED));
    const whole = JSON.parse(renderGraph(target)) as GraphDocument;
    const { resource: _r, data: _d, ...rest } = whole;
    expect(scopedGraph(whole, [])).toEqual(rest);
  });
});

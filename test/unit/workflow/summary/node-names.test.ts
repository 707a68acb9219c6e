/** FR-009: the node names come from the graph's output `node_names`, which the stack writes. */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import { renderGraph } from '../../../../src/graph/render.js';
import { NODE_NAMES_OUTPUT } from '../../../../src/contract/graph/graph-outputs.js';
import { nodeNamesFrom } from '../../../../src/workflow/summary/node-names.js';
import { samplePlan } from '../../../support/cli.js';

describe('nodeNamesFrom', () => {
  it('GIVEN the outputs of tofu output -json or a plan THEN it gives the list of node_names', () => {
    expect(nodeNamesFrom({ node_names: { value: ['alpha', 'beta'] }, submission: { value: '' } })).toEqual(['alpha', 'beta']);
    expect(nodeNamesFrom({ node_names: { value: [] } })).toEqual([]);
  });

  it('GIVEN no such output, a value known only after the apply, or not a list of names THEN undefined', () => {
    expect(nodeNamesFrom(undefined)).toBeUndefined();
    expect(nodeNamesFrom({})).toBeUndefined();
    expect(nodeNamesFrom({ node_names: {} })).toBeUndefined();
    expect(nodeNamesFrom({ node_names: { value: 'alpha' } })).toBeUndefined();
    expect(nodeNamesFrom({ node_names: { value: [1] } })).toBeUndefined();
  });

  it('GIVEN a target graph THEN it outputs its node names under that name, so the reader and the stack agree', () => {
    const plan = parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json');
    for (const t of buildTargets(plan, loadCoordinates({}, { K8S_REGISTRY: 'r' }, process.cwd()), '/p/g.json')) {
      const graph = JSON.parse(renderGraph(t));
      expect(graph.output[NODE_NAMES_OUTPUT].value).toEqual(t.nodes.map((n) => n.name));
      expect(nodeNamesFrom(graph.output)).toEqual(t.nodes.map((n) => n.name));
    }
  });
});

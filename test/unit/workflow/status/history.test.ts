import { describe, expect, it } from 'vitest';
import { compareNodes } from '../../../../src/workflow/status/history.js';
import { readStateFacts, type StateNode } from '../../../../src/workflow/status/nodes-in-state.js';
import { fixtureState, imageRef, type FixtureNode } from '../state-fixture.js';

const nodes = (n: Record<string, FixtureNode>): Map<string, StateNode> => new Map(readStateFacts(fixtureState(1, 'ns1', n))!.nodes.map((x) => [x.node, x]));

describe('compareNodes', () => {
  it('GIVEN a new image with a new tag THEN an image change with both digests and tags', () => {
    expect(compareNodes(nodes({ web: { image: imageRef('web', 'a'), tag: 'v1' } }), nodes({ web: { image: imageRef('web', 'b'), tag: 'v2' } }))).toEqual([
      { node: 'web', change: 'image', from: imageRef('web', 'a'), to: imageRef('web', 'b'), fromTag: 'v1', toTag: 'v2' },
    ]);
  });
  it('GIVEN nodes added and removed, a failed and then a passed rollout, a new machine ID and claim THEN each is said', () => {
    expect(compareNodes(new Map(), nodes({ web: { image: imageRef('web', 'a') } }))).toEqual([{ node: 'web', change: 'added', image: imageRef('web', 'a'), tag: 't1' }]);
    expect(compareNodes(nodes({ web: { image: imageRef('web', 'a') } }), new Map())).toEqual([{ node: 'web', change: 'removed', image: imageRef('web', 'a') }]);
    const failed = compareNodes(nodes({ web: { image: imageRef('web', 'a') } }), nodes({ web: { image: imageRef('web', 'b'), tainted: true, machineId: 'm2', claimUid: 'u2' } }));
    expect(failed.map((c) => c.change)).toEqual(['image', 'rollout-failed', 'machine-id', 'claim']);
    expect(compareNodes(nodes({ web: { image: imageRef('web', 'b'), tainted: true } }), nodes({ web: { image: imageRef('web', 'b') } }))).toEqual([{ node: 'web', change: 'rollout-passed' }]);
  });
  it('GIVEN the same nodes THEN no change', () => {
    const same = { web: { image: imageRef('web', 'a') } };
    expect(compareNodes(nodes(same), nodes(same))).toEqual([]);
  });
});

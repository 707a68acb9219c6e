import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import type { StateSource } from '../../../../src/state/source/state-source.js';
import { findNodeCopies } from '../../../../src/workflow/guard/node-copies.js';
import { readStateNodes } from '../../../../src/workflow/status/nodes-in-state.js';
import { samplePlan } from '../../../support/cli.js';

const models = buildTargets(parseGroupPlan(JSON.stringify(samplePlan()), '/p/g.json'), loadCoordinates({}, { K8S_REGISTRY: 'reg' }, process.cwd()), '/p/g.json', ['*']);
const model = (t: string) => models.find((m) => m.target === t)!;

/** A state of the graph of stacks/ as tofu writes it (format 4), reduced to what is read. */
function state(namespace: string | undefined, deployments: string[], extra: object[] = []): Buffer {
  const resources = [
    ...(namespace ? [{ mode: 'managed', type: 'kubernetes_namespace_v1', name: 'namespace', instances: [{ attributes: { metadata: [{ name: namespace, labels: {} }] } }] }] : []),
    ...deployments.map((n) => ({ mode: 'managed', type: 'kubernetes_manifest', name: `node-${n}_deployment_0A1B2C3D`, instances: [{ attributes: { manifest: { value: {} } } }] })),
    ...deployments.map((n) => ({ mode: 'managed', type: 'kubernetes_persistent_volume_claim_v1', name: `node-${n}_state_0A1B2C3D`, instances: [{ attributes: {} }] })),
    ...extra,
  ];
  return Buffer.from(JSON.stringify({ version: 4, serial: 3, lineage: 'l', resources, outputs: {} }));
}

function source(states: Record<string, Buffer>): Pick<StateSource, 'read'> & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    read: async (key) => {
      reads.push(key!);
      return states[key!];
    },
  };
}

describe('readStateNodes', () => {
  it('GIVEN a state THEN the nodes with a Deployment instance, and the namespace of its namespace resource', () => {
    const gone = { mode: 'managed', type: 'kubernetes_manifest', name: 'node-zeta_deployment_0A1B2C3D', instances: [] };
    const data = { mode: 'data', type: 'kubernetes_manifest', name: 'node-eta_deployment_0A1B2C3D', instances: [{ attributes: {} }] };
    expect(readStateNodes(state('ns-web', ['beta', 'alpha'], [gone, data]))).toEqual({ namespace: 'ns-web', nodes: ['alpha', 'beta'] });
  });
  it('GIVEN no namespace resource THEN no namespace; GIVEN no resources THEN nothing runs', () => {
    expect(readStateNodes(state(undefined, ['alpha']))).toEqual({ namespace: undefined, nodes: ['alpha'] });
    expect(readStateNodes(Buffer.from(JSON.stringify({ version: 4, serial: 1, lineage: 'l' })))).toEqual({ namespace: undefined, nodes: [] });
  });
  it('GIVEN a body that is not a state THEN undefined', () => {
    expect(readStateNodes(Buffer.from('not json'))).toBeUndefined();
    expect(readStateNodes(Buffer.from(JSON.stringify({ resources: 'x' })))).toBeUndefined();
  });
});

describe('findNodeCopies', () => {
  it('GIVEN the state of target all runs alpha and beta WHEN target web (alpha, beta) is checked THEN both are named with both namespaces', async () => {
    const s = source({ 'g1-all': state('fediversity', ['alpha', 'beta', 'delta', 'gamma']) });
    const copies = await findNodeCopies({ model: model('web'), otherTargets: ['all', 'mail'], plannedAlongside: [], source: s, onUnreadable: () => {} });
    expect(s.reads).toEqual(['g1-all', 'g1-mail']);
    expect(copies.map((c) => [c.node, c.namespace, c.otherTarget, c.otherNamespace, c.otherStateKey, c.seenIn])).toEqual([
      ['alpha', 'fediversity-web', 'all', 'fediversity', 'g1-all', 'state'],
      ['beta', 'fediversity-web', 'all', 'fediversity', 'g1-all', 'state'],
    ]);
    expect(copies[0]!.words).toBe(
      'node alpha already runs in namespace fediversity (target all, state g1-all); target web runs it in namespace fediversity-web too: two copies, each with its own /var/lib and machine ID. ' +
        'If one copy is meant, `deploy destroy --target all` removes target all (each of its nodes, with their /var/lib)',
    );
  });

  it('GIVEN no other state runs a node of this target THEN no copy, whatever the plan file says', async () => {
    const s = source({ 'g1-all': state('fediversity', []), 'g1-mail': state('fediversity-mail', ['gamma']) });
    expect(await findNodeCopies({ model: model('web'), otherTargets: ['all', 'mail'], plannedAlongside: [], source: s, onUnreadable: () => {} })).toEqual([]);
  });

  it('GIVEN other targets planned in the same run THEN their copies are named once, the state taking precedence', async () => {
    const s = source({ 'g1-web': state('fediversity-web', ['alpha']) });
    const copies = await findNodeCopies({ model: model('all'), otherTargets: ['mail', 'web'], plannedAlongside: [model('mail'), model('web')], source: s, onUnreadable: () => {} });
    expect(copies.map((c) => `${c.node} ${c.otherTarget} ${c.seenIn}`)).toEqual(['alpha web state', 'beta mail this run', 'beta web this run', 'gamma mail this run']);
  });

  it('GIVEN a state that is not one of ours THEN it is said and skipped', async () => {
    const unreadable: string[] = [];
    const s = source({ 'g1-all': Buffer.from('{"x":') });
    expect(await findNodeCopies({ model: model('web'), otherTargets: ['all'], plannedAlongside: [], source: s, onUnreadable: (k) => unreadable.push(k) })).toEqual([]);
    expect(unreadable).toEqual(['g1-all']);
  });
});

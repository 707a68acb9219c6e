/**
 * `"namespaceManagedBy": "admin"` (issue 29, a least-privilege deployer): the graph reads the
 * admin's namespace instead of making it, a state that held deploy's own namespace forgets it
 * without deleting it, and everything else is the graph of deploy's own namespace. Without the
 * field the graph is as before.
 */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { renderGraph } from '../../../src/graph/render.js';
import { samplePlan } from '../../support/cli.js';

const PLAN_FILE = '/plans/group.json';

function graph(managedBy?: 'deploy' | 'admin'): any {
  const plan = { ...samplePlan(), ...(managedBy ? { namespaceManagedBy: managedBy } : {}) };
  const [all] = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000' }, process.cwd()), PLAN_FILE, ['all']);
  return JSON.parse(renderGraph(all!));
}

describe('the graph of a target whose namespace is the admin\'s', () => {
  const admin = graph('admin');

  it('GIVEN namespaceManagedBy admin THEN no namespace resource: a read of it, by name, that fails the plan when it is missing', () => {
    expect(admin.resource.kubernetes_namespace_v1).toBeUndefined();
    const [read] = Object.values<any>(admin.data.kubernetes_resources).filter((d) => d.kind === 'Namespace');
    expect(read).toMatchObject({ api_version: 'v1', kind: 'Namespace', field_selector: 'metadata.name=fediversity' });
    expect(read.depends_on).toBeUndefined(); // read at plan time, before any push
    expect(read.lifecycle.postcondition[0].error_message).toContain('The namespace "fediversity" does not exist, and the group plan says it is the admin\'s');
    expect(admin.removed).toEqual([{ from: 'kubernetes_namespace_v1.namespace', lifecycle: { destroy: false } }]);
  });

  it('THEN the NetworkPolicy and the nodes are in that namespace, the NetworkPolicy after its read', () => {
    const [policy] = Object.values<any>(admin.resource.kubernetes_network_policy_v1);
    expect(policy.metadata.namespace).toBe('fediversity');
    expect(policy.depends_on).toEqual(['data.kubernetes_resources.namespace']);
    expect(Object.values<any>(admin.resource.kubernetes_manifest).map((d) => d.manifest.metadata.namespace)).toEqual(['fediversity', 'fediversity', 'fediversity', 'fediversity']);
  });

  it('GIVEN no field or "deploy" THEN the graph is the one of deploy\'s own namespace, byte for byte', () => {
    const before = graph();
    expect(graph('deploy')).toEqual(before);
    expect(before.removed).toBeUndefined();
    expect(Object.values<any>(before.resource.kubernetes_namespace_v1)).toHaveLength(1);
    const [policy] = Object.values<any>(before.resource.kubernetes_network_policy_v1);
    expect(policy.metadata.namespace).toBe('${kubernetes_namespace_v1.namespace.metadata[0].name}');
  });

  it('GIVEN another value THEN the plan is refused naming the field', () => {
    expect(() => parseGroupPlan(JSON.stringify({ ...samplePlan(), namespaceManagedBy: 'cluster' }), PLAN_FILE)).toThrow(/namespaceManagedBy: must be "deploy" .* or "admin"/);
  });
});

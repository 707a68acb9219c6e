/**
 * The typed objects' hand edits that managedFields cannot show (typed-drift.ts): read from tofu's
 * own drift, the state as applied against its refresh, kept where tofu's plan sets them back.
 */
import { describe, expect, it } from 'vitest';
import { attributeField, typedAppliedAttributes, typedDriftEdits } from '../../../../src/workflow/drift/typed-drift.js';
import type { TofuResource } from '../../../../src/contract/graph/tofu-state.js';
import type { HandEdit } from '../../../../src/workflow/drift/hand-edits.js';
import { model } from '../target-fixture.js';
import { names } from '../../../../src/config/names.js';
import { stateView } from '../../../../src/workflow/drift/cached-target-state.js';
import { holdsAppliedAttribute } from '../../../../src/workflow/drift/hand-edits.js';

const NS = 'kubernetes_namespace_v1.namespace';
const NP = 'kubernetes_network_policy_v1.network-policy';
const resource = (address: string, attributes: Record<string, unknown>): TofuResource => {
  const [type, name] = address.split('.') as [string, string];
  return { mode: 'managed', type, name, instances: [{ attributes }] };
};
const nsAttrs = (labels: Record<string, string>, version = '1') => ({ metadata: [{ name: model.namespace, labels, resource_version: version }] });
const update = (address: string, changedAttributes: string[]) => ({ address, name: address.split('.')[1]!, actions: ['update'], actionReason: undefined, changedAttributes });

describe('typedDriftEdits', () => {
  const psa = { 'pod-security.kubernetes.io/enforce': 'baseline', team: 'a' };

  it("GIVEN a namespace's pod-security label removed by a write with no field manager THEN named, removed, set back", () => {
    const { 'pod-security.kubernetes.io/enforce': _gone, ...rest } = psa;
    const edits = typedDriftEdits(model, [update(NS, ['metadata[0].labels.pod-security.kubernetes.io/enforce'])], [], [resource(NS, nsAttrs(psa))], [resource(NS, nsAttrs(rest, '2'))]);
    expect(edits).toEqual([{ kind: 'Namespace', name: model.namespace, field: 'metadata.labels[pod-security.kubernetes.io/enforce]', writer: 'removed by a write that left no field manager', action: 'set-back', inTemplate: false }]);
  });

  it('GIVEN a value the graph changes while the cluster kept the applied one THEN no hand edit (the graph\'s change)', () => {
    const edits = typedDriftEdits(model, [update(NS, ['metadata[0].labels.team'])], [], [resource(NS, nsAttrs(psa))], [resource(NS, nsAttrs(psa))]);
    expect(edits).toEqual([]);
  });

  it('GIVEN a computed attribute that moved (resource_version) but that tofu does not set back THEN no hand edit', () => {
    const edits = typedDriftEdits(model, [update(NS, ['metadata[0].labels.team'])], [], [resource(NS, nsAttrs(psa, '1'))], [resource(NS, nsAttrs(psa, '7'))]);
    expect(edits).toEqual([]);
  });

  it("GIVEN the edit named already from managedFields (its writer known) THEN not named twice; a NetworkPolicy's rule removed is named by the provider's path", () => {
    const named: HandEdit = { kind: 'Namespace', name: model.namespace, field: 'metadata.labels[team]', writer: 'kubectl-label', action: 'set-back', inTemplate: false };
    const ns = typedDriftEdits(model, [update(NS, ['metadata[0].labels.team'])], [named], [resource(NS, nsAttrs(psa))], [resource(NS, nsAttrs({ ...psa, team: 'b' }))]);
    expect(ns).toEqual([]);
    const rule = { from: [{ pod_selector: [{}] }] };
    const np = typedDriftEdits(model, [update(NP, ['spec[0].ingress[0]'])], [], [resource(NP, { spec: [{ ingress: [rule] }] })], [resource(NP, { spec: [{ ingress: [] }] })]);
    expect(np).toEqual([{ kind: 'NetworkPolicy', name: 'same-namespace-only', field: 'spec[0].ingress[0]', writer: 'removed by a write that left no field manager', action: 'set-back', inTemplate: false }]);
  });

  it("GIVEN the state THEN each owned typed object's attributes by Kind/name (what a field another writer holds is compared with); the Deployments and the rest are not typed objects", () => {
    const sa = { automount_service_account_token: false };
    const typed = typedAppliedAttributes(model, [resource(NS, nsAttrs(psa)), resource('kubernetes_service_account_v1.node-alpha_account_0123ABCD', sa), resource('kubernetes_manifest.node-alpha_deployment_0123ABCD', { manifest: {} })]);
    expect([...typed.keys()].sort()).toEqual([`Namespace/${model.namespace}`, `ServiceAccount/${names.serviceAccount('alpha')}`]);
    expect(typed.get(`ServiceAccount/${names.serviceAccount('alpha')}`)).toBe(sa);
  });

  it('GIVEN the state as the planner reads it (the view of the state document, cached-target-state.ts) THEN the same attributes: a value set back to the applied one is no edit, a change of the graph is none (issue 45, seed 562543228 round 131)', () => {
    // GIVEN a state document as tofu writes it, read through stateView as plan-target does
    const SA = 'kubernetes_service_account_v1.node-alpha_account_0123ABCD';
    const doc = (account: Record<string, unknown>, labels: Record<string, string>) =>
      JSON.stringify({
        version: 4, terraform_version: '1.12.6', serial: 3, lineage: 'l', outputs: {},
        resources: [
          { ...resource(NS, nsAttrs(labels)), provider: 'p' },
          { ...resource(SA, { automount_service_account_token: false, ...account }), provider: 'p' },
        ],
      });
    const view = stateView(doc({}, psa)).resources;
    // WHEN the account's mount is held by another writer, at the applied value (true, then false again)
    const applied = typedAppliedAttributes(model, view).get(`ServiceAccount/${names.serviceAccount('alpha')}`);
    const steps = ['f:automountServiceAccountToken'];
    // THEN it holds the applied attribute: no hand edit to name, nothing that stops the record
    expect(holdsAppliedAttribute({ object: { automountServiceAccountToken: false }, applied }, steps)).toBe(true);
    expect(holdsAppliedAttribute({ object: { automountServiceAccountToken: true }, applied }, steps)).toBe(false);
    // AND a label the graph changes while the cluster kept the applied one is the graph's change, not an edit
    expect(typedDriftEdits(model, [update(NS, ['metadata[0].labels.team'])], [], view, stateView(doc({}, psa)).resources)).toEqual([]);
  });

  it('reads a provider path as people do', () => {
    expect(attributeField('metadata[0].annotations.a.b/c')).toBe('metadata.annotations[a.b/c]');
    expect(attributeField('automount_service_account_token')).toBe('automount_service_account_token');
  });
});

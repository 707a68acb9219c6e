/** `deploy status` and `history` of a target whose namespace is the admin's (namespaceManagedBy "admin"): the state holds no namespace resource. */
import { describe, expect, it } from 'vitest';
import { readStateFacts } from '../../../../src/workflow/status/nodes-in-state.js';
import { fixtureState } from '../state-fixture.js';

describe('the state of a target whose namespace is the admin\'s', () => {
  it('GIVEN no namespace resource in the state THEN its namespace is the NetworkPolicy\'s (status and history read the cluster there)', () => {
    const state = JSON.parse(fixtureState(3, 'ns1', {}).toString());
    state.resources = state.resources.filter((r: any) => r.type !== 'kubernetes_namespace_v1');
    expect(readStateFacts(Buffer.from(JSON.stringify(state)))?.namespace).toBeUndefined();
    state.resources.push({ mode: 'managed', type: 'kubernetes_network_policy_v1', name: 'network-policy', instances: [{ attributes: { metadata: [{ name: 'same-namespace-only', namespace: 'admins-ns' }] } }] });
    expect(readStateFacts(Buffer.from(JSON.stringify(state)))?.namespace).toBe('admins-ns');
  });
});

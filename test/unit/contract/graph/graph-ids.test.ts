import { describe, expect, it } from 'vitest';
import { describeGraphAddress, graphPartOf, nodeConstructId, nodeResourceOf, resourceNameOf, spirePartOf } from '../../../../src/contract/graph/graph-ids.js';

describe('graph resource names -> (node, part)', () => {
  it('GIVEN the names CDKTF makes for a node THEN each gives its construct, node and part', () => {
    expect(nodeResourceOf('image-web_push_832904CE')).toEqual({ construct: 'image', node: 'web', part: 'push' });
    expect(nodeResourceOf('image-my-node-2_digest_0A1B2C3D')).toEqual({ construct: 'image', node: 'my-node-2', part: 'digest' });
    expect(nodeResourceOf(`${nodeConstructId('node', 'alpha')}_state_26D7464E`)).toEqual({ construct: 'node', node: 'alpha', part: 'state' });
    expect(nodeResourceOf('node-alpha_machine-id_0A1B2C3D')).toEqual({ construct: 'node', node: 'alpha', part: 'machine-id' });
  });

  it('GIVEN a resource of the target, or a part the construct does not have THEN it is no node resource', () => {
    for (const name of ['namespace', 'network-policy', 'spire_handoff_0A1B2C3D', 'image-web_state_0A1B2C3D', 'node-web_push_0A1B2C3D', 'node-web_deployment_0a1b2c3d', 'node-Web_deployment_0A1B2C3D', 'pod-web_deployment_0A1B2C3D']) {
      expect(nodeResourceOf(name), name).toBeUndefined();
    }
  });

  it('GIVEN the SPIRE resources THEN the hand-off and the ConfigMap are named, nothing else', () => {
    expect(spirePartOf('spire_handoff_0A1B2C3D')).toBe('handoff');
    expect(spirePartOf('spire_agent-config-map_0A1B2C3D')).toBe('agent-config-map');
    expect(spirePartOf('spire_server-account_0A1B2C3D')).toBeUndefined();
    expect(spirePartOf('node-spire_deployment_0A1B2C3D')).toBeUndefined();
  });

  it('GIVEN an address THEN its last step is the name', () => {
    expect(resourceNameOf('data.external.image-web_digest_0A1B2C3D')).toBe('image-web_digest_0A1B2C3D');
    expect(resourceNameOf('null_resource.spire_handoff_0A1B2C3D')).toBe('spire_handoff_0A1B2C3D');
  });

  it('GIVEN any address of the graph THEN graphPartOf gives its node and part, or the target part; describeGraphAddress says it in words', () => {
    expect(graphPartOf('kubernetes_manifest.node-mail_deployment_A2CE01B5')).toEqual({ scope: 'node', node: 'mail', part: 'deployment' });
    expect(graphPartOf('data.external.image-web_digest_0A1B2C3D')).toEqual({ scope: 'node', node: 'web', part: 'digest' });
    expect(graphPartOf('kubernetes_namespace_v1.namespace')).toEqual({ scope: 'target', part: 'namespace' });
    expect(graphPartOf('null_resource.spire_handoff_0A1B2C3D')).toEqual({ scope: 'target', part: 'handoff' });
    expect(graphPartOf('provider["registry.opentofu.org/hashicorp/null"]')).toBeUndefined();
    expect(describeGraphAddress('kubernetes_manifest.node-mail_deployment_A2CE01B5')).toBe('mail: Deployment');
    expect(describeGraphAddress('null_resource.image-web_push_0A1B2C3D')).toBe('web: image push');
    expect(describeGraphAddress('kubernetes_network_policy_v1.network-policy')).toBe('NetworkPolicy');
    expect(describeGraphAddress('null_resource.step')).toBeUndefined();
  });
});

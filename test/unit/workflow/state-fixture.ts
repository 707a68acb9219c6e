/**
 * State documents of our graphs as tofu writes them (format 4), reduced to the resources and
 * attributes `deploy status` and `deploy history` read; the shapes were taken from a real
 * state of a one-node apply on the local cluster.
 */
export interface FixtureNode {
  image: string;
  tag?: string;
  tainted?: boolean;
  machineId?: string;
  claimUid?: string;
}

export const REPO = 'reg.test:5000/ns1';
export const digest = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;
export const imageRef = (node: string, c: string) => `${REPO}/${node}@${digest(c)}`;

export function fixtureState(serial: number, namespace: string, nodes: Record<string, FixtureNode>): Buffer {
  const resources: object[] = [{ mode: 'managed', type: 'kubernetes_namespace_v1', name: 'namespace', instances: [{ attributes: { id: namespace, metadata: [{ name: namespace, labels: {} }] } }] }];
  for (const [n, f] of Object.entries(nodes)) {
    resources.push(
      { mode: 'managed', type: 'null_resource', name: `image-${n}_push_3F135F12`, instances: [{ attributes: { id: '1', triggers: { ref: `${REPO}/${n}:${f.tag ?? 't1'}` } } }] },
      {
        mode: 'managed',
        type: 'kubernetes_manifest',
        name: `node-${n}_deployment_527B86C9`,
        instances: [{ attributes: { manifest: { value: { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers: [{ name: 'node', image: f.image }] } } } }, type: ['object', {}] } } }],
      },
      { mode: 'managed', type: 'null_resource', name: `node-${n}_rollout_9910F9FD`, instances: [{ ...(f.tainted ? { status: 'tainted' } : {}), attributes: { id: '2', triggers: { image: f.image } } }] },
      { mode: 'managed', type: 'random_uuid', name: `node-${n}_machine-id_23E02768`, instances: [{ attributes: { id: 'u', result: f.machineId ?? `mid-${n}` } }] },
      { mode: 'managed', type: 'kubernetes_persistent_volume_claim_v1', name: `node-${n}_state_C764F828`, instances: [{ attributes: { id: 'c', metadata: [{ name: `${n}-state`, uid: f.claimUid ?? `uid-${n}` }] } }] },
    );
  }
  resources.push({ mode: 'data', type: 'external', name: 'image-x_digest_BE0E7A17', instances: [{ attributes: { result: { digest: digest('f') } } }] });
  return Buffer.from(JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage: 'l-1', outputs: {}, resources }));
}

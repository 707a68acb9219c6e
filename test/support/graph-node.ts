/**
 * A node's objects as the graph makes them (stacks/pod-template.ts `deploymentManifest`, the
 * names of src/config/names.ts), for the e2e tests that put a node into the cluster without
 * tofu: the rollout step's own tests and the cluster's. Built by hand before, they drifted from
 * the graph (another liveness script, a readiness period of 2 s instead of 10 s, no security
 * context); made here from the graph's own template, they run what a deployed node runs: the
 * same probes, periods, security context, service account and volumes (issue 49).
 *
 * The target is the one `deploy` builds from a one-node group plan with the default
 * coordinates; the manifest's `${` and `%{` are unescaped as tofu's template rendering does.
 */
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../src/config/load.js';
import { names } from '../../src/config/names.js';
import { deploymentManifest } from '../../stacks/pod-template.js';

export interface GraphNodeOptions {
  readonly namespace: string;
  readonly node: string;
  /** The image by digest, as the graph pins it. */
  readonly image: string;
  /** The node's machine ID (container_uuid), as the graph's random_uuid holds it. */
  readonly machineId: string;
  /** Another claim than the graph's (`<node>-state`), with its storage class: a claim that cannot bind. */
  readonly claim?: { readonly name: string; readonly storageClassName?: string };
}

/** tofu renders the manifest as a template: `$${` reaches the object as `${`, `%%{` as `%{`. */
const rendered = <T>(manifest: T): T => JSON.parse(JSON.stringify(manifest).replaceAll('$${', '${').replaceAll('%%{', '%{')) as T;

/** The node's Deployment, as the graph writes it. */
export function graphDeployment(o: GraphNodeOptions) {
  const plan = { version: 1, group: 'e2e', nodes: { [o.node]: { image: { archive: '/nowhere.tar', tag: 't' }, apps: [] } }, roster: { spiffeProvider: null } };
  const [target] = buildTargets(parseGroupPlan(JSON.stringify(plan), '/e2e/group.json'), loadCoordinates({}, { K8S_REGISTRY: '127.0.0.1:1' }, process.cwd()), '/e2e/group.json', ['all']);
  const node = target!.nodes.find((n) => n.name === o.node)!;
  const deployment = rendered(deploymentManifest(target!, node, o.namespace, o.image, o.machineId));
  if (o.claim !== undefined) {
    const state = deployment.spec.template.spec.volumes.find((v) => v.name === 'state');
    if (state?.persistentVolumeClaim === undefined) throw new Error('the graph\'s Deployment has no `state` claim volume: update test/support/graph-node.ts');
    state.persistentVolumeClaim.claimName = o.claim.name;
  }
  return deployment;
}

/** The node's service account, claim and Deployment, as a `kubectl apply -f -` List. */
export function graphNodeObjects(o: GraphNodeOptions): string {
  const claim = o.claim ?? { name: names.stateClaim(o.node) };
  const items = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: names.serviceAccount(o.node), namespace: o.namespace }, automountServiceAccountToken: false },
    {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim.name, namespace: o.namespace },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(claim.storageClassName !== undefined ? { storageClassName: claim.storageClassName } : {}) },
    },
    graphDeployment(o),
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

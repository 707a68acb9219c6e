/**
 * The SPIRE names of a target (specification, key entities "Node service account"): the
 * k8s_psat cluster is the namespace; a node's alias and host entry; the files the hand-off
 * leaves on the spire node. One place, so the graph, the tests and the docs agree.
 */
import { nodeServiceAccount } from '../service-accounts.js';

export const SPIRE_TRUST_DOMAIN = 'fediversity';
/** The audience of the projected token (k8s_psat's default audience). */
export const SPIRE_AUDIENCE = 'spire-server';
/** The ConfigMap with the server's trust bundle, mounted by the node pods. */
export const SPIRE_AGENT_CONFIG_MAP = 'spire-agent';
/**
 * The SPIRE server's port the agents dial: SPIRE's default (server.conf `bind_port`), fixed
 * rather than a coordinate: the spire node of the central group serves every cluster on it.
 */
export const SPIRE_SERVER_PORT = 8081;
/** The root of the hand-off on the spire node, one directory per namespace (= k8s_psat cluster). */
export const SPIRE_NODE_K8S_DIR = '/var/lib/spire/k8s';

export const spireNames = {
  /**
   * The k8s_psat cluster of one node: `<namespace>.<node>`. The specification names the cluster
   * after the namespace, but SPIRE 1.13.3 names a k8s_psat agent
   * `spiffe://<td>/spire/agent/k8s_psat/<cluster>/<Kubernetes node UID>` (nothing configures
   * it): two node pods of one namespace on one Kubernetes node would then be one agent and take
   * the SVID from each other. Per node, each agent is its own; the namespace stays the prefix
   * (both are DNS labels, so the dot is unambiguous), so "one namespace, one SPIRE server" holds.
   * The ConfigMap carries the namespace; the node image adds `.<node>` from its token.
   */
  cluster: (namespace: string, node: string) => `${namespace}.${node}`,
  /** spiffe://fediversity/k8s/<ns>/<ns>/node-<node>: the node alias of the agent. */
  nodeAlias: (namespace: string, node: string) => `spiffe://${SPIRE_TRUST_DOMAIN}/k8s/${namespace}/${namespace}/${nodeServiceAccount(node)}`,
  /** spiffe://fediversity/host/<ns>-<node>: the host entry, whose X.509 SVID the agent holds (SC-005). */
  hostEntry: (namespace: string, node: string) => `spiffe://${SPIRE_TRUST_DOMAIN}/host/${namespace}-${node}`,
  /** Cluster-scoped RBAC objects are per namespace, so two targets never share one. */
  clusterRole: (namespace: string) => `deploy-spire-server-${namespace}`,
  namespaceDir: (namespace: string) => `${SPIRE_NODE_K8S_DIR}/${namespace}`,
  kubeconfig: (namespace: string) => `${SPIRE_NODE_K8S_DIR}/${namespace}/kubeconfig`,
  dropFile: (namespace: string, node: string) => `${SPIRE_NODE_K8S_DIR}/${namespace}/entries/${node}.json`,
} as const;

/**
 * The drop-file of one node: the registration entries in the format of
 * `spire-server entry create -data <file>`. The alias matches the node's agent by its k8s_psat
 * selectors; the host entry is parented to the alias and selects root processes of the node
 * (`unix:uid:0`), so the agent itself is issued it.
 */
export function dropFile(namespace: string, node: string): string {
  const alias = spireNames.nodeAlias(namespace, node);
  const entries = {
    entries: [
      {
        spiffe_id: alias,
        parent_id: `spiffe://${SPIRE_TRUST_DOMAIN}/spire/server`,
        selectors: [
          { type: 'k8s_psat', value: `cluster:${spireNames.cluster(namespace, node)}` },
          { type: 'k8s_psat', value: `agent_ns:${namespace}` },
          { type: 'k8s_psat', value: `agent_sa:${nodeServiceAccount(node)}` },
        ],
      },
      {
        spiffe_id: spireNames.hostEntry(namespace, node),
        parent_id: alias,
        selectors: [{ type: 'unix', value: 'uid:0' }],
      },
    ],
  };
  return JSON.stringify(entries, null, 2) + '\n';
}

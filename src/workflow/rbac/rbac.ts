/**
 * `deploy rbac` (issue 29, a least-privilege deployer): the objects a cluster's admin applies
 * so that a CD identity can plan, apply, roll out, roll back, read the status and history of,
 * and destroy a group's targets, and nothing else. Pure: target models and subjects in,
 * Kubernetes objects out (src/cli/rbac.ts prints them).
 *
 * Why the admin owns the namespaces: a namespaced Role cannot exist before its namespace, and
 * an identity that may create namespaces and RoleBindings in them can grant itself anything
 * there. So per target the admin makes the Namespace (with deploy's labels and the Pod Security
 * labels it would set), a Role with exactly the verbs and resources deploy uses in it, and a
 * RoleBinding to the identity; the group plan says `"namespaceManagedBy": "admin"`, so the
 * graph only reads the namespace. Cluster-wide, one ClusterRole (and binding) per target: the
 * get and the name-filtered list of its namespace and its RuntimeClass, by name, and the list
 * of CRDs tofu's provider needs. docs/running-on-your-cluster.md.
 *
 * Each rule names what needs it (the list was measured: the e2e test runs every verb with a
 * token bound to these objects alone, test/e2e/deploy-rbac.test.ts).
 */
import type { TargetModel } from '../../config/target-model.js';
import { LABEL_GROUP, LABEL_MANAGED_BY, MANAGED_BY } from '../../contract/pod-labels.js';
import { POD_SECURITY_LABELS } from '../../contract/pod-security.js';
import { SPIRE_SERVER_ACCOUNT } from '../../contract/service-accounts.js';
import { SPIRE_AGENT_CONFIG_MAP, spireNames } from '../../contract/spire/spire-names.js';

const RBAC_API = 'rbac.authorization.k8s.io';
const RBAC_VERSION = `${RBAC_API}/v1`;

/** The identity the role is bound to, as `--service-account`, `--user` and `--group` name it. */
export type RbacSubject =
  | { readonly kind: 'ServiceAccount'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'User' | 'Group'; readonly name: string };

/** One rule of a Role or ClusterRole, as the API writes it. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** A Kubernetes object of the output (Namespace, Role, RoleBinding, ClusterRole, ClusterRoleBinding). */
export interface RbacObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly [field: string]: unknown;
}

/** The name of the Role and RoleBinding in each namespace. */
export const DEPLOYER_ROLE = 'deploy';

/** The ClusterRole and ClusterRoleBinding of one target: per namespace, so that two outputs never overwrite each other's names. */
export function deployerClusterRole(namespace: string): string {
  return `deploy-${namespace}`;
}

/** The writes deploy makes to an object it owns: the provider's create, patch (typed updates, server-side apply) and delete. */
const OWN = ['create', 'delete', 'get', 'list', 'patch'] as const;

/**
 * What deploy does in a target's namespace. Who needs each rule:
 * - deployments: the graph's server-side apply (kubernetes_manifest: get, create, patch),
 *   destroy (delete), the check and status (list), the rollout step (get, list, watch; patch
 *   for the rollback and its annotation), the ownership step (patch);
 * - replicasets, pods, events: the rollout step's watch (list, watch) and status (pods);
 *   pods/log the log tail of a failed pod; pods/exec the systemd job list and the journal of
 *   the failed units (a websocket exec: measured on 1.36, without get the journal's exec is
 *   refused, 403; create is the verb RBAC documents for exec, not measured apart);
 * - persistentvolumeclaims, serviceaccounts: the graph's typed resources (own), the check's
 *   list, the rollout step's watch of the claims;
 * - networkpolicies: the graph's NetworkPolicy (own).
 */
export function namespaceRules(spire: boolean): PolicyRule[] {
  const rules: PolicyRule[] = [
    { apiGroups: [''], resources: ['events'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: [...OWN, 'watch'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] },
    { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: [...OWN] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: [...OWN, 'watch'] },
    { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: [...OWN] },
  ];
  if (!spire) return rules;
  // the SPIRE part of the graph (stacks/spire-identity.ts): the ConfigMap spire-agent, the
  // spire-server account's token for the hand-off (kubectl create token), its Role and RoleBinding
  return [
    ...rules,
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['delete', 'get', 'patch'], resourceNames: [SPIRE_AGENT_CONFIG_MAP] },
    { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'], resourceNames: [SPIRE_SERVER_ACCOUNT] },
    { apiGroups: [RBAC_API], resources: ['rolebindings', 'roles'], verbs: ['create'] },
    { apiGroups: [RBAC_API], resources: ['rolebindings', 'roles'], verbs: ['delete', 'get', 'patch'], resourceNames: [SPIRE_SERVER_ACCOUNT] },
  ];
}

/**
 * What deploy reads (and, with SPIRE, writes) outside the namespace, by name where RBAC allows
 * it: the namespace itself (the graph's read and the check's list, filtered by name, which RBAC
 * matches against resourceNames), the RuntimeClass (the same), and the list of the CRDs the
 * provider reads schemas from, and the list of PersistentVolumes (what becomes of a claim's
 * data: claim-risk.ts). With SPIRE: the ClusterRole
 * and the two ClusterRoleBindings of the spire-server account (create cannot be limited by
 * name in RBAC; the others are), `bind` of system:auth-delegator (the token reviews), and
 * nodes get, which the role the graph makes grants (RBAC refuses a role that grants what its
 * maker does not hold).
 */
export function clusterRules(model: Pick<TargetModel, 'namespace' | 'runtimeClass' | 'spire'>): PolicyRule[] {
  const rules: PolicyRule[] = [
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'], resourceNames: [model.namespace] },
    { apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'], verbs: ['get', 'list'], resourceNames: [model.runtimeClass] },
    // measured: the provider's kubernetes_manifest and kubernetes_resources look every kind up
    // among the CRDs before OpenAPI ("failed to look up GVK ... among available CRDs: ...
    // forbidden"), a list that cannot be limited by name: terraform-provider-kubernetes
    // manifest/provider/resource.go (lookUpGVKinCRDs). Their schemas only; no CRD is written.
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['list'] },
    // the claims at risk (claim-risk.ts): what becomes of a claim's data is its volume's phase and
    // reclaim policy; a volume's name is its provisioner's, so no name limits the list. Read only;
    // without it the plan still judges the claims' own fields and says the volumes were not read
    { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['list'] },
  ];
  if (model.spire === undefined) return rules;
  const role = spireNames.clusterRole(model.namespace);
  return [
    ...rules,
    { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
    { apiGroups: [RBAC_API], resources: ['clusterrolebindings', 'clusterroles'], verbs: ['create'] },
    { apiGroups: [RBAC_API], resources: ['clusterroles'], verbs: ['delete', 'get', 'patch'], resourceNames: [role] },
    { apiGroups: [RBAC_API], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['system:auth-delegator'] },
    { apiGroups: [RBAC_API], resources: ['clusterrolebindings'], verbs: ['delete', 'get', 'patch'], resourceNames: [role, `${role}-auth-delegator`] },
  ];
}

/** The objects for `kubectl apply -f -` by the cluster's admin, per target: Namespace, Role, RoleBinding, ClusterRole, ClusterRoleBinding. */
export function buildRbac(targets: readonly TargetModel[], subjects: readonly RbacSubject[]): RbacObject[] {
  const out: RbacObject[] = [];
  const bound = subjects.map(subjectOf);
  for (const model of targets) {
    const labels = { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_GROUP]: model.group };
    const ns = model.namespace;
    const clusterName = deployerClusterRole(ns);
    out.push(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { ...labels, ...POD_SECURITY_LABELS } } },
      { apiVersion: RBAC_VERSION, kind: 'Role', metadata: { name: DEPLOYER_ROLE, namespace: ns, labels }, rules: namespaceRules(model.spire !== undefined) },
      { apiVersion: RBAC_VERSION, kind: 'RoleBinding', metadata: { name: DEPLOYER_ROLE, namespace: ns, labels }, roleRef: { apiGroup: RBAC_API, kind: 'Role', name: DEPLOYER_ROLE }, subjects: bound },
      { apiVersion: RBAC_VERSION, kind: 'ClusterRole', metadata: { name: clusterName, labels }, rules: clusterRules(model) },
      { apiVersion: RBAC_VERSION, kind: 'ClusterRoleBinding', metadata: { name: clusterName, labels }, roleRef: { apiGroup: RBAC_API, kind: 'ClusterRole', name: clusterName }, subjects: bound },
    );
  }
  return out;
}

function subjectOf(s: RbacSubject): Record<string, string> {
  return s.kind === 'ServiceAccount' ? { kind: s.kind, name: s.name, namespace: s.namespace } : { kind: s.kind, apiGroup: RBAC_API, name: s.name };
}


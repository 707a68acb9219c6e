/**
 * `deploy rbac` (src/workflow/rbac/rbac.ts, src/cli/rbac.ts): per target the admin's Namespace, a
 * Role with the verbs deploy uses in it, a ClusterRole reading the namespace and the
 * RuntimeClass by name; the SPIRE rules only for a group with SPIRE; no wildcard anywhere.
 */
import { describe, expect, it } from 'vitest';
import { load, loadAll } from 'js-yaml';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../../src/config/load.js';
import { renderGraph } from '../../../../src/graph/render.js';
import { buildRbac, clusterRules, namespaceRules, type PolicyRule, type RbacObject } from '../../../../src/workflow/rbac/rbac.js';
import { baseEnv, runCli, samplePlan, spirePlan, tempDir, writeJson } from '../../../support/cli.js';

const PLAN_FILE = '/plans/group.json';
const SPIRE_ENV = {
  K8S_SPIRE_NODE: 'spire.central.example.org',
  SSH_USER: 'deploy',
  SSH_PRIVATE_KEY_FILE: '/keys/id',
  SSH_NODES: JSON.stringify({ 'spire.central.example.org': { hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X' } }),
};

function targetsOf(spire: boolean, target = '*') {
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000', ...(spire ? SPIRE_ENV : {}) }, process.cwd());
  const plan = { ...(spire ? spirePlan() : samplePlan()), namespaceManagedBy: 'admin' };
  return buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, [target]);
}

const words = (rules: readonly PolicyRule[]) => rules.flatMap((r) => [...r.apiGroups, ...r.resources, ...r.verbs, ...(r.resourceNames ?? [])]);
const grants = (rules: readonly PolicyRule[], group: string, resource: string, verb: string, name?: string) =>
  rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb) && (r.resourceNames === undefined || (name !== undefined && r.resourceNames.includes(name))));

describe('the role of deploy rbac', () => {
  it('GIVEN a group without SPIRE THEN the Role grants what the graph and the rollout use in the namespace, and nothing of RBAC, ConfigMaps or tokens', () => {
    const rules = namespaceRules(false);
    for (const [group, resource, verb] of [
      ['apps', 'deployments', 'patch'],
      ['apps', 'deployments', 'watch'],
      ['apps', 'replicasets', 'list'],
      ['', 'pods', 'watch'],
      ['', 'pods/log', 'get'],
      ['', 'pods/exec', 'create'],
      ['', 'events', 'watch'],
      ['', 'persistentvolumeclaims', 'delete'],
      ['', 'serviceaccounts', 'create'],
      ['networking.k8s.io', 'networkpolicies', 'create'],
    ] as const) {
      expect(grants(rules, group, resource, verb), `${verb} ${resource}`).toBe(true);
    }
    expect(rules.some((r) => r.apiGroups.includes('rbac.authorization.k8s.io'))).toBe(false);
    expect(rules.some((r) => r.resources.some((x) => x === 'configmaps' || x === 'secrets' || x === 'serviceaccounts/token'))).toBe(false);
    // no pod writes: pods come from the Deployments
    expect(grants(rules, '', 'pods', 'delete')).toBe(false);
    expect(grants(rules, '', 'pods', 'create')).toBe(false);
  });

  it('GIVEN a group with SPIRE THEN the Role adds the ConfigMap, the spire-server token and its Role and RoleBinding, by name where RBAC allows', () => {
    const rules = namespaceRules(true);
    expect(grants(rules, '', 'configmaps', 'patch', 'spire-agent')).toBe(true);
    expect(grants(rules, '', 'configmaps', 'patch', 'other')).toBe(false);
    expect(grants(rules, '', 'serviceaccounts/token', 'create', 'spire-server')).toBe(true);
    expect(grants(rules, '', 'serviceaccounts/token', 'create', 'node-web')).toBe(false);
    expect(grants(rules, 'rbac.authorization.k8s.io', 'roles', 'delete', 'spire-server')).toBe(true);
    expect(grants(rules, 'rbac.authorization.k8s.io', 'roles', 'delete', 'admin')).toBe(false);
    expect(rules.slice(0, namespaceRules(false).length)).toEqual(namespaceRules(false));
  });

  it('THEN the ClusterRole reads the namespace and the RuntimeClass by name, lists the CRDs and the PersistentVolumes, and with SPIRE only the names of its own ClusterRole and bindings', () => {
    const [all] = targetsOf(false, 'all');
    const rules = clusterRules(all!);
    expect(rules).toEqual([
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'], resourceNames: ['fediversity'] },
      { apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'], verbs: ['get', 'list'], resourceNames: ['systemd'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['list'] },
      { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['list'] },
    ]);
    const [withSpire] = targetsOf(true, 'all');
    const spire = clusterRules(withSpire!);
    expect(grants(spire, 'rbac.authorization.k8s.io', 'clusterroles', 'delete', 'deploy-spire-server-fediversity')).toBe(true);
    expect(grants(spire, 'rbac.authorization.k8s.io', 'clusterroles', 'delete', 'cluster-admin')).toBe(false);
    expect(grants(spire, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'system:auth-delegator')).toBe(true);
    expect(grants(spire, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'cluster-admin')).toBe(false);
    expect(grants(spire, 'rbac.authorization.k8s.io', 'clusterroles', 'escalate')).toBe(false);
  });

  it('THEN no rule anywhere has a wildcard verb, resource or group, for a group with or without SPIRE', () => {
    for (const spire of [false, true]) {
      const objects = buildRbac(targetsOf(spire), [{ kind: 'ServiceAccount', namespace: 'ci', name: 'deployer' }]);
      const rules = objects.flatMap((o) => (o.rules as PolicyRule[] | undefined) ?? []);
      expect(rules.length).toBeGreaterThan(0);
      expect(words(rules).filter((w) => w.includes('*'))).toEqual([]);
    }
  });

  it('THEN every kind of object the graph makes in the namespace is one the Role may create and delete (the rendered graph, with SPIRE)', () => {
    const [all] = targetsOf(true, 'all');
    const graph = JSON.parse(renderGraph(all!));
    const rules = namespaceRules(true);
    const kinds: Record<string, [string, string]> = {
      kubernetes_persistent_volume_claim_v1: ['', 'persistentvolumeclaims'],
      kubernetes_service_account_v1: ['', 'serviceaccounts'],
      kubernetes_network_policy_v1: ['networking.k8s.io', 'networkpolicies'],
      kubernetes_config_map_v1: ['', 'configmaps'],
      kubernetes_role_v1: ['rbac.authorization.k8s.io', 'roles'],
      kubernetes_role_binding_v1: ['rbac.authorization.k8s.io', 'rolebindings'],
      kubernetes_manifest: ['apps', 'deployments'],
    };
    const namespaced = Object.keys(graph.resource).filter((t) => t.startsWith('kubernetes_') && !t.startsWith('kubernetes_cluster_role'));
    expect(namespaced.sort()).toEqual(Object.keys(kinds).sort());
    for (const t of namespaced) {
      const [group, resource] = kinds[t]!;
      expect(grants(rules, group, resource, 'create'), t).toBe(true);
      for (const [, r] of Object.entries<any>(graph.resource[t])) {
        const name = r.metadata?.name ?? r.manifest?.metadata?.name;
        expect(grants(rules, group, resource, 'delete', name), `${t} ${name}`).toBe(true);
      }
    }
  });

  it('THEN per target: the Namespace with the Pod Security labels, Role and RoleBinding in it, ClusterRole and binding named after it, bound to each subject', () => {
    const objects = buildRbac(targetsOf(false), [
      { kind: 'ServiceAccount', namespace: 'ci', name: 'deployer' },
      { kind: 'Group', name: 'cd' },
    ]);
    const names = (o: RbacObject) => `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
    expect(objects.map(names)).toEqual(
      ['fediversity', 'fediversity-mail', 'fediversity-web'].flatMap((ns) => [`Namespace/${ns}`, `Role/${ns}/deploy`, `RoleBinding/${ns}/deploy`, `ClusterRole/deploy-${ns}`, `ClusterRoleBinding/deploy-${ns}`]),
    );
    expect(objects[0]!.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'baseline', 'deploy.fediversity/group': 'g1' });
    expect(objects[2]!.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'deployer', namespace: 'ci' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'cd' },
    ]);
  });
});

describe('deploy rbac on the command line', () => {
  it('GIVEN a plan and a service account THEN YAML for kubectl apply, or a v1 List with --output json; without an identity exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const plan = await writeJson(`${dir}/group.json`, { ...samplePlan(), namespaceManagedBy: 'admin' });
      const yaml = await runCli(['rbac', '--plan', plan, '--service-account', 'ci/deployer'], baseEnv);
      expect(yaml.code, yaml.stderr).toBe(0);
      expect(yaml.stderr).toBe('');
      expect((loadAll(yaml.stdout) as any[]).map((o) => o.kind)).toEqual(['Namespace', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
      const json = await runCli(['rbac', '--plan', plan, '--user', 'ci-bot', '--output', 'json', '--target', '*'], baseEnv);
      expect(json.code, json.stderr).toBe(0);
      const list = load(json.stdout) as any;
      expect(list.kind).toBe('List');
      expect(list.items).toHaveLength(15);
      const none = await runCli(['rbac', '--plan', plan], baseEnv);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('name the identity the role is for');
      const bad = await runCli(['rbac', '--plan', plan, '--service-account', 'deployer'], baseEnv);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('"deployer" must be <namespace>/<name>');
    } finally {
      await cleanup();
    }
  });

  it('GIVEN a plan whose namespaces are deploy\'s THEN it warns that the role does not let deploy create them', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const plan = await writeJson(`${dir}/group.json`, samplePlan());
      const r = await runCli(['rbac', '--plan', plan, '--group', 'cd'], baseEnv);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('does not say "namespaceManagedBy": "admin"');
    } finally {
      await cleanup();
    }
  });
});

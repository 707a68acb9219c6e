/**
 * A least-privilege deployer (issue 29, second bullet), against the local cluster: the
 * cluster's admin applies `deploy rbac` of the group plan for a ServiceAccount; a kubeconfig
 * with a token of that ServiceAccount, bound to nothing else, then runs US1 AS1-AS3, a rollback
 * (US2 AS1), status, history and the destroy (US3) of a group whose namespace is the admin's
 * (`"namespaceManagedBy": "admin"`). The same token is refused another namespace: deploy's
 * error names the verb and resource the role lacks, and kubectl cannot list pods there.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../integration/images-scripts.js';
import { DeployHarness, images } from './harness.js';

describe('a deployer bound only to the role of deploy rbac', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let broken: BuiltImage;
  let changed: BuiltImage;
  let plan = '';
  let kubeconfig = '';
  const stamp = randomUUID().slice(0, 6);
  const ciNamespace = `rbac-ci-${stamp}`;
  const foreign = `rbac-other-${stamp}`;
  const asDeployer = (verb: string, file: string, env: NodeJS.ProcessEnv = {}, opts: { json?: boolean } = {}) =>
    h.deploy(verb, file, ['--target', 'all'], { KUBE_CONFIG_PATH: kubeconfig, ...env }, opts);
  const admin = { namespace: null } as const;
  let firstPod: Record<string, any> = {};

  beforeAll(async () => {
    h = await DeployHarness.create('rbac');
    [good, broken, changed] = [await images.good(), await images.broken(), await images.goodWith(`rbac=${stamp}`)];
    plan = await h.writePlan('group', { n1: { image: good }, n2: { image: good } }, { namespaceManagedBy: 'admin' });

    // the admin: the CD identity, then what `deploy rbac` prints for it, applied as is
    await h.kubectlOk(['create', 'namespace', ciNamespace], admin);
    await h.kubectlOk(['create', 'serviceaccount', 'deployer'], { namespace: ciNamespace });
    const rbac = await h.deploy('rbac', plan, ['--target', 'all', '--service-account', `${ciNamespace}/deployer`], {}, { json: false });
    expect(rbac.exitCode, rbac.stderr).toBe(0);
    expect(rbac.stderr).toBe('');
    await h.kubectlOk(['apply', '-f', '-'], { input: rbac.stdout, namespace: null });
    const token = (await h.kubectlOk(['create', 'token', 'deployer', '--duration=1h'], { namespace: ciNamespace })).trim();

    // the cluster of the admin's kubeconfig, and as its only user the deployer's token
    kubeconfig = join(h.dir, 'deployer.kubeconfig');
    await writeFile(kubeconfig, await h.kubectlOk(['config', 'view', '--raw', '--flatten', '--minify'], admin), { mode: 0o600 });
    const edit = (args: string[]) => h.kubectlOk(['--kubeconfig', kubeconfig, 'config', ...args], admin);
    const adminUser = await edit(['view', '-o', 'jsonpath={.contexts[0].context.user}']);
    await edit(['set-credentials', 'deployer', `--token=${token}`]);
    await edit(['set-context', '--current', '--user=deployer']);
    await edit(['delete-user', adminUser]);
    expect(await readFile(kubeconfig, 'utf8')).not.toContain('client-key-data');
  });

  afterAll(async () => {
    await h?.kubectl(['delete', 'clusterrolebinding,clusterrole', '--ignore-not-found', `deploy-${h.namespace}`], admin);
    for (const ns of [ciNamespace, foreign]) await h?.kubectl(['delete', 'namespace', '--ignore-not-found', '--wait=false', ns], admin);
    await h?.cleanup();
  });

  it('GIVEN deploy rbac THEN it prints the namespace, a Role without wildcards and a ClusterRole that names what it reads', async () => {
    const r = await h.deploy('rbac', plan, ['--target', 'all', '--service-account', `${ciNamespace}/deployer`], {}, { json: false });
    const objects = loadAll(r.stdout) as any[];
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([`Namespace/${h.namespace}`, 'Role/deploy', 'RoleBinding/deploy', `ClusterRole/deploy-${h.namespace}`, `ClusterRoleBinding/deploy-${h.namespace}`]);
    const rules = objects.flatMap((o) => o.rules ?? []);
    expect(rules.flatMap((x: any) => [...x.verbs, ...x.resources, ...x.apiGroups]).filter((w: string) => w === '*')).toEqual([]);
    const cluster = objects.find((o) => o.kind === 'ClusterRole');
    // by name, but for the list of CRDs the provider reads schemas from, and the list of
    // PersistentVolumes (what becomes of a claim's data: their names are the provisioner's)
    expect(cluster.rules.filter((x: any) => x.resourceNames?.length !== 1).map((x: any) => [x.verbs, x.resources])).toEqual([
      [['list'], ['customresourcedefinitions']],
      [['list'], ['persistentvolumes']],
    ]);
    const ns = await h.getJson(['get', 'namespace', h.namespace], admin);
    expect(ns.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'baseline' });
  });

  it('US1 AS1: the apply as the deployer pushes, runs both nodes by digest, and they boot', async () => {
    const r = await asDeployer('apply', plan);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].rollouts.map((x: any) => [x.node, x.outcome])).toEqual([
      ['n1', 'ready'],
      ['n2', 'ready'],
    ]);
    for (const node of ['n1', 'n2']) {
      const digest = await h.registryDigest(`${h.env.K8S_REGISTRY}/${h.namespace}/${node}:${good.tag}`);
      expect((await h.getJson(['get', 'deployment', node])).spec.template.spec.containers[0].image).toBe(`${h.env.K8S_REGISTRY}/${h.namespace}/${node}@${digest}`);
      expect(await h.exec(node, 'systemctl is-system-running')).toBe('running');
      firstPod[node] = await h.podOf(node);
    }
  });

  it('US1 AS2: applying again changes nothing, answered by the verified no-op check', async () => {
    const r = await asDeployer('apply', plan);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].applied).toBe(false);
    expect(r.json.targets[0].verifiedNoop, r.stderr).toBe(true);
    expect((await h.podOf('n1')).metadata.uid).toBe(firstPod.n1.metadata.uid);
  });

  it('US1 AS3: a new tag replaces the pod of that node alone', async () => {
    const plan2 = await h.writePlan('changed', { n1: { image: good }, n2: { image: changed } }, { namespaceManagedBy: 'admin' });
    const r = await asDeployer('apply', plan2);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.targets[0].nodes.find((n: any) => n.node === 'n2')).toMatchObject({ push: 'replace', rollout: 'replace' });
    expect(await h.exec('n2', 'cat /etc/node-config')).toContain(`rbac=${stamp}`);
    expect((await h.podOf('n1')).metadata.uid).toBe(firstPod.n1.metadata.uid);
  });

  it('US2 AS1: a configuration that does not boot is rolled back to the previous image, as the deployer', async () => {
    const before = (await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image;
    const bad = await h.writePlan('broken', { n1: { image: broken }, n2: { image: changed } }, { namespaceManagedBy: 'admin' });
    const r = await asDeployer('apply', bad);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.json.targets[0].rollouts.find((x: any) => x.node === 'n1')).toMatchObject({ outcome: 'rolled-back', previousImage: before });
    const n1 = r.json.targets[0].rollouts.find((x: any) => x.node === 'n1');
    expect(n1.failedUnits).toContain('broken.service');
    // the journal of the failed unit, read through an exec into the pod (pods/exec of the Role)
    expect(n1.logTail.join('\n')).toContain('Failed to start broken.service');
    expect((await h.getJson(['get', 'deployment', 'n1'])).spec.template.spec.containers[0].image).toBe(before);
    expect((await h.podOf('n1')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
  });

  it('status and history as the deployer: the nodes are read, the runs listed', async () => {
    const plan2 = await h.writePlan('changed', { n1: { image: good }, n2: { image: changed } }, { namespaceManagedBy: 'admin' });
    const back = await asDeployer('apply', plan2);
    expect(back.exitCode, back.stderr).toBe(0);
    const s = await asDeployer('status', plan2);
    expect(s.exitCode, s.stderr + s.stdout).toBe(0);
    expect(s.json.targets[0].nodes.map((n: any) => [n.node, n.mark]).sort()).toEqual([
      ['n1', 'ok'],
      ['n2', 'ok'],
    ]);
    const hist = await asDeployer('history', plan2);
    expect(hist.exitCode, hist.stderr + hist.stdout).toBe(0);
    expect(JSON.stringify(hist.json)).toContain('n1');
  });

  it('US3: destroy as the deployer removes what deploy made and leaves the admin\'s namespace', async () => {
    const r = await asDeployer('destroy', plan, {}, { json: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`destroyed: everything deploy made in namespace ${h.namespace}; the namespace stays`);
    expect((await h.kubectl(['get', 'namespace', h.namespace], admin)).exitCode).toBe(0);
    for (const kind of ['deployments', 'persistentvolumeclaims', 'networkpolicies']) {
      expect((await h.getJson(['get', kind])).items.map((o: any) => o.metadata.name), kind).toEqual([]);
    }
    expect((await h.getJson(['get', 'serviceaccounts'])).items.map((o: any) => o.metadata.name)).toEqual(['default']);
  });

  it("GIVEN a namespace that is not the group's WHEN the deployer plans there THEN deploy fails naming the permission the role lacks, and kubectl cannot list its pods", async () => {
    await h.kubectlOk(['create', 'namespace', foreign], admin);
    const r = await asDeployer('plan', plan, { K8S_NAMESPACE: foreign }, { json: false });
    expect(r.exitCode, r.stderr).not.toBe(0);
    expect(r.stderr).toContain("the cluster refused a permission deploy's identity");
    expect(r.stderr).toMatch(/: (get|list) namespaces \(API group core\) cluster-wide; the role from `deploy rbac` does not grant it/);
    expect(r.stderr).toContain('have the cluster\'s admin apply `deploy rbac`');
    const pods = await h.kubectl(['--kubeconfig', kubeconfig, 'get', 'pods'], { namespace: foreign });
    expect(pods.exitCode).not.toBe(0);
    expect(pods.stderr).toContain(`cannot list resource "pods" in API group "" in the namespace "${foreign}"`);
    const canI = await h.kubectl(['--kubeconfig', kubeconfig, 'auth', 'can-i', 'create', 'deployments.apps'], { namespace: foreign });
    expect(canI.stdout.trim()).toBe('no');
  });
});

describe("a target deploy made with its own namespace, whose plan then says the namespace is the admin's", () => {
  let h: DeployHarness;
  let own = '';
  let admins = '';

  beforeAll(async () => {
    h = await DeployHarness.create('rbac-switch');
    const good = await images.good();
    own = await h.writePlan('own', { lone: { image: good } });
    admins = await h.writePlan('admins', { lone: { image: good } }, { namespaceManagedBy: 'admin' });
  });
  afterAll(() => h?.cleanup());

  it('WHEN planned and applied THEN tofu forgets the namespace without deleting it: the pod stays, and destroy then leaves the namespace', async () => {
    const first = await h.deploy('apply', own, ['--target', 'all']);
    expect(first.exitCode, first.stderr).toBe(0);
    const pod = await h.podOf('lone');
    const plan = await h.deploy('plan', admins, ['--target', 'all']);
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(plan.json.targets[0].nodes.map((n: any) => n.words)).toEqual(['no change']);
    const apply = await h.deploy('apply', admins, ['--target', 'all']);
    expect(apply.exitCode, apply.stderr).toBe(0);
    expect((await h.podOf('lone')).metadata.uid).toBe(pod.metadata.uid);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).toBe(0);
    const destroyed = await h.deploy('destroy', admins, ['--target', 'all']);
    expect(destroyed.exitCode, destroyed.stderr).toBe(0);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).toBe(0);
    expect((await h.getJson(['get', 'deployments'])).items).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { renderGraph } from '../../../src/graph/render.js';
import { samplePlan } from '../../support/cli.js';
import { MAX_ROLLOUT_TIMEOUT_SECONDS } from '../../../src/contract/probes.js';

const PLAN_FILE = '/plans/group.json';

function graphs(planOverride: (p: any) => void = () => {}, env: NodeJS.ProcessEnv = {}) {
  const plan = samplePlan();
  planOverride(plan);
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000', K8S_STORAGE_CLASS: 'fast', K8S_STATE_SIZE: '2Gi', DEPLOY_ROLLOUT_TIMEOUT: '90s', ...env }, process.cwd());
  const targets = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, ['*']);
  return Object.fromEntries(targets.map((t) => [t.target, { model: t, json: JSON.parse(renderGraph(t)) as any }]));
}

/** The resources of one type keyed by their construct path (`<target>/<node>/<id>`). */
function byPath(json: any, kind: 'resource' | 'data', type: string): Record<string, any> {
  const out: Record<string, any> = {};
  for (const r of Object.values<any>(json[kind]?.[type] ?? {})) out[r['//'].metadata.path.split('/').slice(1).join('/')] = r;
  return out;
}
const address = (json: any, kind: 'resource' | 'data', type: string, path: string) => {
  for (const [id, r] of Object.entries<any>(json[kind][type])) if (r['//'].metadata.path.endsWith('/' + path)) return `${kind === 'data' ? 'data.' : ''}${type}.${id}`;
  throw new Error(`no ${type} at ${path}`);
};

describe('the graph of a target', () => {
  const g = graphs();

  it('GIVEN 4 nodes and 2 apps WHEN synthesized THEN there is one graph per target with its own namespace, state key and nodes', () => {
    expect(Object.keys(g).sort()).toEqual(['all', 'mail', 'web']);
    expect(g.all!.model.namespace).toBe('fediversity');
    expect(g.web!.model.namespace).toBe('fediversity-web');
    expect(g.mail!.model.namespace).toBe('fediversity-mail');
    expect(g.all!.model.stateKey).toBe('g1-all');
    expect(g.web!.model.stateKey).toBe('g1-web');
    expect(g.all!.model.nodes.map((n) => n.name)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(g.web!.model.nodes.map((n) => n.name)).toEqual(['alpha', 'beta']);
    expect(g.mail!.model.nodes.map((n) => n.name)).toEqual(['beta', 'gamma']);
    const ns = Object.values<any>(g.web!.json.resource.kubernetes_namespace_v1)[0];
    expect(ns.metadata.name).toBe('fediversity-web');
    const deployments = Object.values<any>(g.web!.json.resource.kubernetes_manifest).map((d) => d.manifest.metadata);
    expect(deployments).toEqual([
      expect.objectContaining({ name: 'alpha', namespace: 'fediversity-web' }),
      expect.objectContaining({ name: 'beta', namespace: 'fediversity-web' }),
    ]);
  });

  it('reads the RuntimeClass before any push, and fails the plan when it is missing', () => {
    const json = g.all!.json;
    const rc = Object.values<any>(json.data.kubernetes_resources)[0];
    expect(rc).toMatchObject({ api_version: 'node.k8s.io/v1', kind: 'RuntimeClass', field_selector: 'metadata.name=systemd' });
    expect(rc.lifecycle.postcondition[0].condition).toBe('${length(self.objects) == 1}');
    expect(rc.lifecycle.postcondition[0].error_message).toMatch(/no RuntimeClass "systemd".*Nothing was pushed/);
    const rcAddress = address(json, 'data', 'kubernetes_resources', 'runtime-class');
    for (const push of Object.values(byPath(json, 'resource', 'null_resource')).filter((r: any) => r['//'].metadata.path.endsWith('/push'))) {
      expect(push.depends_on).toEqual([rcAddress]);
    }
  });

  it('pushes with skopeo, replaced only when the tag reference changes, and reads the digest after the push', () => {
    const json = g.all!.json;
    const nulls = byPath(json, 'resource', 'null_resource');
    const push = nulls['image-alpha/push'];
    expect(push.triggers).toEqual({ ref: 'reg.test:5000/fediversity/alpha:a1' });
    const cmd: string = push.provisioner[0]['local-exec'].command;
    expect(cmd).toContain(`archive='/plans/images/alpha.tar'`);
    expect(cmd).toContain(`copy --quiet --retry-times 3 "$@" "docker-archive:$archive" 'docker://reg.test:5000/fediversity/alpha:a1'`);
    // the digest of this push, for the read after it (FR-003)
    expect(cmd).toContain('--digestfile "$DEPLOY_RUN_DIR/alpha.pushed-digest"');
    expect(cmd).toContain('"$${DEPLOY_SKOPEO:-skopeo}"');
    expect(cmd).not.toContain('tls-verify'); // TLS on by default
    expect(nulls['image-beta/push'].provisioner[0]['local-exec'].command).toContain(`archive='/abs/beta.tar'`);
    const digest = byPath(json, 'data', 'external')['image-alpha/digest'];
    expect(digest.depends_on).toEqual([address(json, 'resource', 'null_resource', 'image-alpha/push')]);
    expect(digest.program.slice(-3)).toEqual(['deploy-digest', 'reg.test:5000/fediversity/alpha:a1', 'alpha']);
    expect(digest.program[2]).toContain('inspect');
  });

  it('pushes an archive shared by several nodes once, with no order between the pushes in the graph (the push script shares the upload)', () => {
    const { json } = graphs((p) => {
      for (const n of ['beta', 'gamma']) p.nodes[n].image = { ...p.nodes.alpha.image };
    }).all!;
    const nulls = byPath(json, 'resource', 'null_resource');
    const rcAddress = address(json, 'data', 'kubernetes_resources', 'runtime-class');
    const command = (node: string): string => nulls[`image-${node}/push`].provisioner[0]['local-exec'].command;
    const upload = (node: string) => /upload-([0-9a-f]{16})/.exec(command(node))?.[1];
    // a push's block is its node's alone: another node's image never changes it
    for (const n of ['alpha', 'beta', 'gamma', 'delta']) expect(nulls[`image-${n}/push`].depends_on).toEqual([rcAddress]);
    // each still pushes its own repository from the archive: skopeo mounts the layers it finds
    expect(command('beta')).toContain(`'docker://reg.test:5000/fediversity/beta:a1'`);
    expect(upload('alpha')).toBeDefined();
    expect(upload('beta')).toBe(upload('alpha'));
    expect(upload('gamma')).toBe(upload('alpha'));
    // another archive is not held back
    expect(upload('delta')).not.toBe(upload('alpha'));
  });

  it("GIVEN nodes sharing an archive WHEN the first of them gets another image THEN no other node's block changes (no order between pushes to move in the state)", () => {
    const shared = (p: any) => {
      for (const n of ['beta', 'gamma']) p.nodes[n].image = { ...p.nodes.alpha.image };
    };
    const before = graphs(shared).all!.json;
    const after = graphs((p) => {
      shared(p);
      p.nodes.alpha.image = { ...p.nodes.alpha.image, tag: 'a2' };
    }).all!.json;
    const blocksOf = (json: any, node: string) =>
      (['resource', 'data'] as const).flatMap((kind) => Object.values<any>(json[kind]).flatMap((byId) => Object.values<any>(byId))).filter((b) => /\/(image|node)-([a-z]+)\//.exec(b['//'].metadata.path)?.[2] === node);
    expect(blocksOf(after, 'alpha')).not.toEqual(blocksOf(before, 'alpha'));
    for (const n of ['beta', 'gamma', 'delta']) expect(blocksOf(after, n), n).toEqual(blocksOf(before, n));
  });

  it('creates the namespace, then the NetworkPolicy, then the Deployments, with no order after the pushes', () => {
    const json = g.all!.json;
    const ns = Object.values<any>(json.resource.kubernetes_namespace_v1)[0];
    // deploy pushes before tofu's apply (src/workflow/target/push-first.ts): an order here would
    // put every push into every object's dependencies in the state (target-stack-order.test.ts)
    expect(ns.depends_on).toBeUndefined();
    const [policyId, policy] = Object.entries<any>(json.resource.kubernetes_network_policy_v1)[0]!;
    expect(policy.metadata.namespace).toBe('${kubernetes_namespace_v1.namespace.metadata[0].name}');
    expect(policy.spec).toEqual({ policy_types: ['Ingress'], ingress: [{ from: [{ pod_selector: {} }] }], pod_selector: {} });
    for (const d of Object.values<any>(json.resource.kubernetes_manifest)) {
      expect(d.depends_on).toContain(`kubernetes_network_policy_v1.${policyId}`);
    }
  });

  it('gives each node a claim on /var/lib of the operator-set class and size, and a service account', () => {
    const json = g.all!.json;
    const claim = byPath(json, 'resource', 'kubernetes_persistent_volume_claim_v1')['node-alpha/state'];
    expect(claim.metadata.name).toBe('alpha-state');
    expect(claim.spec).toMatchObject({ access_modes: ['ReadWriteOnce'], storage_class_name: 'fast', resources: { requests: { storage: '2Gi' } } });
    expect(claim.wait_until_bound).toBe(false);
    const sa = byPath(json, 'resource', 'kubernetes_service_account_v1')['node-alpha/account'];
    expect(sa.metadata.name).toBe('node-alpha');
    expect(sa.automount_service_account_token).toBe(false);
    const pod = byPath(json, 'resource', 'kubernetes_manifest')['node-alpha/deployment'].manifest.spec.template.spec;
    expect(pod.volumes[0]).toEqual({ name: 'state', persistentVolumeClaim: { claimName: 'alpha-state' } });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'state', mountPath: '/var/lib' });
    expect(pod.serviceAccountName).toBe('node-alpha');
  });

  it('replaces the Deployment when, and only when, the claim is made again (its UID changes); the rollout step also follows every create or update of the Deployment (SC-001 after drift)', () => {
    const json = g.all!.json;
    const claimUid = `${address(json, 'resource', 'kubernetes_persistent_volume_claim_v1', 'node-alpha/state')}.metadata[0].uid`;
    const deployment = address(json, 'resource', 'kubernetes_manifest', 'node-alpha/deployment');
    expect(byPath(json, 'resource', 'kubernetes_manifest')['node-alpha/deployment'].lifecycle).toEqual({ replace_triggered_by: [claimUid] });
    expect(byPath(json, 'resource', 'null_resource')['node-alpha/rollout'].lifecycle).toEqual({ replace_triggered_by: [claimUid, deployment] });
  });

  it('omits the storage class when the operator sets none (the cluster default is used)', () => {
    const plain = graphs(() => {}, { K8S_STORAGE_CLASS: '' });
    const claim = byPath(plain.all!.json, 'resource', 'kubernetes_persistent_volume_claim_v1')['node-alpha/state'];
    expect(claim.spec.storage_class_name).toBeUndefined();
  });

  it('passes a random UUID in state to systemd as container_uuid', () => {
    const json = g.all!.json;
    const uuidId = address(json, 'resource', 'random_uuid', 'node-alpha/machine-id').split('.')[1];
    const env = byPath(json, 'resource', 'kubernetes_manifest')['node-alpha/deployment'].manifest.spec.template.spec.containers[0].env;
    expect(env).toEqual([
      { name: 'container', value: 'docker' },
      { name: 'container_uuid', value: `\${random_uuid.${uuidId}.result}` },
    ]);
  });

  it('makes a Deployment of one pod, Recreate, in its own user namespace, with what systemd needs', () => {
    const json = g.all!.json;
    const d = byPath(json, 'resource', 'kubernetes_manifest')['node-alpha/deployment'];
    expect(d.field_manager).toEqual({ name: 'deploy', force_conflicts: true });
    expect(d.wait).toBeUndefined(); // no wait for the rollout in the apply (FR-006)
    const m = d.manifest;
    expect(m).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'alpha', namespace: 'fediversity' } });
    expect(m.spec.replicas).toBe(1);
    expect(m.spec.strategy).toEqual({ type: 'Recreate' });
    // the API server's backstop at the longest timeout deploy accepts; the run's timeout is the rollout step's
    expect(m.spec.progressDeadlineSeconds).toBe(MAX_ROLLOUT_TIMEOUT_SECONDS);
    const pod = m.spec.template.spec;
    expect(pod.runtimeClassName).toBe('systemd');
    expect(pod.hostUsers).toBe(false);
    expect(pod.terminationGracePeriodSeconds).toBe(30);
    expect(pod.automountServiceAccountToken).toBe(false);
    // Pod Security Admission baseline, restricted but for the capabilities (issue 29)
    expect(pod.securityContext).toEqual({ seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0].securityContext).toEqual({ allowPrivilegeEscalation: false });
    const nsLabels = Object.values<any>(json.resource.kubernetes_namespace_v1)[0].metadata.labels;
    expect(nsLabels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted' });
    const mounts = Object.fromEntries(pod.containers[0].volumeMounts.map((v: any) => [v.mountPath, v.name]));
    for (const p of ['/run', '/run/lock', '/tmp']) {
      const vol = pod.volumes.find((v: any) => v.name === mounts[p]);
      expect(vol.emptyDir).toEqual({ medium: 'Memory' });
    }
    const c = pod.containers[0];
    expect(c.readinessProbe.exec.command.join(' ')).toContain('systemctl is-system-running');
    expect(c.readinessProbe.exec.command.join(' ')).toContain('[ "$state" = running ] && exit 0; systemctl --failed');
    // tofu reads the manifest as a template: the shell's own ${...} is escaped as $${...}
    expect(c.readinessProbe.exec.command[2]).toContain('echo "systemd: $${state:-unknown}"');
    // the kubelet lets a boot take up to the longest timeout deploy accepts (not the run's: a per-run value)
    expect(c.startupProbe.failureThreshold * c.startupProbe.periodSeconds).toBe(MAX_ROLLOUT_TIMEOUT_SECONDS);
    // exec probes cost a runc exec each: steady state is one readiness probe per 10 s and one
    // liveness probe per 30 s (issue 11); the rollout waits on the 1 s startup probe instead
    expect(c.startupProbe.periodSeconds).toBe(1);
    expect(c.readinessProbe.periodSeconds).toBe(10);
    expect(c.livenessProbe.periodSeconds * c.livenessProbe.failureThreshold).toBe(90);
  });

  it('runs the readiness probe every --probe-period and liveness every 3x that; the startup probe stays at 1 s', () => {
    const c = (json: any) => Object.values<any>(json.resource.kubernetes_manifest)[0].manifest.spec.template.spec.containers[0];
    const slow = c(graphs(undefined, { DEPLOY_PROBE_PERIOD: '1m' }).all!.json);
    expect(slow.readinessProbe.periodSeconds).toBe(60);
    expect(slow.livenessProbe.periodSeconds).toBe(180);
    expect(slow.startupProbe.periodSeconds).toBe(1);
    expect(slow.startupProbe.failureThreshold).toBe(c(g.all!.json).startupProbe.failureThreshold);
  });

  it('GIVEN two rollout timeouts THEN the graphs are the same bytes: the timeout is a value of the run, not of the graph (no pod replaced, no node re-planned when it changes)', () => {
    const text = (t: string) => JSON.stringify(graphs(undefined, { DEPLOY_ROLLOUT_TIMEOUT: t }).all!.json);
    expect(text('7m')).toBe(text('90s'));
    expect(text('6h')).toBe(text('40s'));
  });

  it('gives systemd the operator-set stop timeout as the grace period (default 30 s)', () => {
    const pod = (json: any) => Object.values<any>(json.resource.kubernetes_manifest)[0].manifest.spec.template.spec;
    expect(pod(graphs(undefined, { DEPLOY_STOP_TIMEOUT: '75s' }).all!.json).terminationGracePeriodSeconds).toBe(75);
    expect(pod(g.all!.json).terminationGracePeriodSeconds).toBe(30);
  });

  it('names the image by the digest recorded at the push, which a moved tag does not change (FR-003)', () => {
    const json = g.all!.json;
    const digestAddr = address(json, 'data', 'external', 'image-alpha/digest');
    const recorded = byPath(json, 'resource', 'terraform_data')['image-alpha/pushed-digest'];
    expect(recorded.input).toEqual({ digest: `\${${digestAddr}.result["digest"]}` });
    // taken again only when the push is replaced, never because the tag's digest differs now
    expect(recorded.lifecycle).toEqual({ ignore_changes: ['input'], replace_triggered_by: [address(json, 'resource', 'null_resource', 'image-alpha/push')] });
    const recordedAddr = address(json, 'resource', 'terraform_data', 'image-alpha/pushed-digest');
    const image = byPath(json, 'resource', 'kubernetes_manifest')['node-alpha/deployment'].manifest.spec.template.spec.containers[0].image;
    expect(image).toBe(`reg.test:5000/fediversity/alpha@\${${recordedAddr}.output["digest"]}`);
  });

  it('runs the rollout step after the Deployment, replaced when the pod template changes', () => {
    const json = g.all!.json;
    const nulls = byPath(json, 'resource', 'null_resource');
    const step = nulls['node-alpha/rollout'];
    expect(step.depends_on).toEqual([address(json, 'resource', 'kubernetes_manifest', 'node-alpha/deployment')]);
    expect(Object.keys(step.triggers).sort()).toEqual(['image', 'machine_id', 'template']);
    expect(step.triggers.image).toContain(address(json, 'resource', 'terraform_data', 'image-alpha/pushed-digest'));
    // the timeout is the run's, from tofu's environment (src/workflow/target/target-session.ts), or deploy's default by hand
    expect(step.provisioner[0]['local-exec'].command).toBe(`"$\${DEPLOY_BIN:-deploy}" rollout --namespace 'fediversity' --node 'alpha' --timeout "$\${DEPLOY_ROLLOUT_TIMEOUT:-5m}"`);
    // a change of the pod spec (here: the runtime class) changes the template trigger
    const other = graphs(() => {}, { K8S_RUNTIME_CLASS: 'other' });
    expect(byPath(other.all!.json, 'resource', 'null_resource')['node-alpha/rollout'].triggers.template).not.toBe(step.triggers.template);
    // ... and a change of tag does not (the image trigger carries it)
    const retag = graphs((p) => (p.nodes.alpha.image.tag = 'a2'));
    expect(byPath(retag.all!.json, 'resource', 'null_resource')['node-alpha/rollout'].triggers.template).toBe(step.triggers.template);
  });

  it('outputs the node names and keeps state in an http backend configured at run time', () => {
    expect(g.all!.json.output.node_names.value).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(g.mail!.json.output.node_names.value).toEqual(['beta', 'gamma']);
    expect(g.all!.json.terraform.backend).toEqual({ http: {} });
  });

  it('drops the nodes a submission turns off, and records the submission id', () => {
    const s = graphs((p) => (p.submission = { id: 'sub-7', turnsOff: ['beta'] }));
    expect(s.all!.json.output.node_names.value).toEqual(['alpha', 'delta', 'gamma']);
    expect(s.web!.json.output.node_names.value).toEqual(['alpha']);
    expect(JSON.stringify(s.all!.json)).not.toContain('beta');
    expect(s.all!.json.output.submission.value).toBe('sub-7');
  });

  it('turns TLS verification off for a plain-http registry only when asked', () => {
    const insecure = graphs(() => {}, { K8S_REGISTRY_TLS_VERIFY: 'false' });
    const nulls = byPath(insecure.all!.json, 'resource', 'null_resource');
    expect(nulls['image-alpha/push'].provisioner[0]['local-exec'].command).toContain('--dest-tls-verify=false');
    expect(byPath(insecure.all!.json, 'data', 'external')['image-alpha/digest'].program[2]).toContain('--tls-verify=false');
  });

  it('never writes a path of a secret file or the kubeconfig into the graph', () => {
    const s = graphs(() => {}, { KUBE_CONFIG_PATH: '/secret/kubeconfig', REGISTRY_AUTH_FILE: '/secret/auth.json' });
    expect(JSON.stringify(s.all!.json)).not.toContain('/secret/');
  });

  it('gives byte-identical output for the same inputs', () => {
    const plan = samplePlan();
    const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000' }, process.cwd());
    const once = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, ['*']).map(renderGraph);
    const twice = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, ['*']).map(renderGraph);
    expect(twice).toEqual(once);
  });
});

/**
 * The target graph with the SPIRE coordinates (FR-015..017): the SPIRE identity after the
 * namespace, the Deployments after the hand-off and the ConfigMap, the pods with the SPIRE
 * volumes of the contract; the key's path nowhere. Without the coordinates: no SPIRE at all.
 */
import { describe, expect, it } from 'vitest';
import { buildTargets, loadCoordinates, parseGroupPlan } from '../../../src/config/load.js';
import { renderGraph } from '../../../src/graph/render.js';
import { samplePlan, spirePlan } from '../../support/cli.js';

const PLAN_FILE = '/plans/group.json';
const KEY = '/very/secret/keys/spire_id_ed25519';
const STAGED = '/tmp/deploy-spire-key-XXXXXX/id';
const HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X';
const SPIRE_ENV = {
  K8S_SPIRE_NODE: 'spire.central.example.org',
  SSH_USER: 'deploy',
  SSH_PRIVATE_KEY_FILE: KEY,
  SSH_NODES: JSON.stringify({ 'spire.central.example.org': { hostKey: HOST_KEY, sshOpts: ['-o', 'Port=2222'] } }),
};

function render(env: NodeJS.ProcessEnv): Record<string, { text: string; json: any }> {
  const coords = loadCoordinates({}, { K8S_REGISTRY: 'reg.test:5000', ...env }, process.cwd());
  // the roster names the spiffe provider exactly when the run has the SPIRE coordinates
  const plan = env.K8S_SPIRE_NODE ? spirePlan() : samplePlan();
  const targets = buildTargets(parseGroupPlan(JSON.stringify(plan), PLAN_FILE), coords, PLAN_FILE, ['*']);
  return Object.fromEntries(
    targets.map((t) => {
      const text = renderGraph(t);
      return [t.target, { text, json: JSON.parse(text) }];
    }),
  );
}

const entries = (json: any, kind: 'resource' | 'data', type: string): [string, any][] => Object.entries<any>(json[kind]?.[type] ?? {});
const addressOf = (json: any, type: string, pathEnd: string) => {
  const hit = entries(json, 'resource', type).filter(([, r]) => r['//'].metadata.path.endsWith(pathEnd));
  expect(hit, `${type} ${pathEnd}`).toHaveLength(1);
  return `${type}.${hit[0]![0]}`;
};

describe('the target graph with the SPIRE coordinates', () => {
  const g = render(SPIRE_ENV);
  const all = g.all!.json;

  it('has the SPIRE identity of the namespace: spire-server account, RBAC, plan-time reads, ConfigMap and hand-off, after the namespace', () => {
    const [, account] = entries(all, 'resource', 'kubernetes_service_account_v1').find(([, r]) => r.metadata.name === 'spire-server')!;
    expect(account.metadata.namespace).toBe('fediversity');
    expect(account.depends_on).toEqual(['kubernetes_namespace_v1.namespace']);
    expect(entries(all, 'resource', 'kubernetes_cluster_role_v1')).toHaveLength(1);
    expect(entries(all, 'resource', 'kubernetes_cluster_role_binding_v1')).toHaveLength(2);
    expect(entries(all, 'resource', 'kubernetes_role_binding_v1')).toHaveLength(1);
    const reads = entries(all, 'data', 'external').filter(([, d]) => d['//'].metadata.path.includes('/spire/'));
    expect(reads.map(([, d]) => d['//'].metadata.path.split('/').pop()).sort()).toEqual(['spire-bundle', 'spire-machine-id']);
    const handoff = all.resource.null_resource[addressOf(all, 'null_resource', '/spire/handoff').split('.')[1]!];
    expect(Object.keys(handoff.triggers).sort()).toEqual(['api_server', 'host_key', 'names', 'spire_machine_id', 'spire_node', 'ssh_options', 'ssh_user']);
    expect(handoff.triggers.ssh_options).toBe("'-o' 'Port=2222'");
    // each target has its own: the k8s_psat cluster and the RBAC are per namespace
    const web = g.web!.json;
    expect(Object.values<any>(web.resource.kubernetes_cluster_role_v1)[0].metadata.name).toBe('deploy-spire-server-fediversity-web');
  });

  it('gives the ConfigMap spire-agent the keys of the contract with the node image', () => {
    const [, cm] = entries(all, 'resource', 'kubernetes_config_map_v1')[0]!;
    expect(cm.metadata).toMatchObject({ name: 'spire-agent', namespace: 'fediversity' });
    expect(Object.keys(cm.data).sort()).toEqual(['bundle.crt', 'cluster', 'server_address', 'server_port', 'trust_domain']);
    expect(cm.data).toMatchObject({ server_address: 'spire.central.example.org', server_port: '8081', trust_domain: 'fediversity', cluster: 'fediversity' });
    expect(cm.data['bundle.crt']).toMatch(/^\$\{base64decode\(data\.external\.spire_spire-bundle_[0-9A-F]{8}\.result\["bundle_b64"\]\)\}$/);
    expect(Object.values<any>(g.mail!.json.resource.kubernetes_config_map_v1)[0].data.cluster).toBe('fediversity-mail');
  });

  it('puts every Deployment after the hand-off and the ConfigMap', () => {
    const handoff = addressOf(all, 'null_resource', '/spire/handoff');
    const cm = addressOf(all, 'kubernetes_config_map_v1', '/spire/agent-config-map');
    const deployments = entries(all, 'resource', 'kubernetes_manifest');
    expect(deployments).toHaveLength(4);
    for (const [, d] of deployments) expect(d.depends_on).toEqual(expect.arrayContaining([handoff, cm, 'kubernetes_network_policy_v1.network-policy']));
  });

  it('gives each pod the projected token of node-<node> (audience spire-server, 0400, 3600 s) and the bundle directory', () => {
    for (const [, d] of entries(all, 'resource', 'kubernetes_manifest')) {
      const node = d.manifest.metadata.name;
      const pod = d.manifest.spec.template.spec;
      expect(pod.serviceAccountName).toBe(`node-${node}`);
      expect(pod.volumes).toContainEqual({
        name: 'spire-token',
        projected: { defaultMode: 0o400, sources: [{ serviceAccountToken: { audience: 'spire-server', expirationSeconds: 3600, path: 'token' } }] },
      });
      expect(pod.volumes).toContainEqual({ name: 'spire-bundle', configMap: { name: 'spire-agent', defaultMode: 0o444 } });
      for (const c of pod.containers) {
        expect(c.volumeMounts).toContainEqual({ name: 'spire-token', mountPath: '/etc/spire-agent/k8s-token', readOnly: true });
        // a directory mount, not subPath: kubelet updates it in place at a CA rotation
        expect(c.volumeMounts).toContainEqual({ name: 'spire-bundle', mountPath: '/etc/spire-agent/bundle', readOnly: true });
        expect(c.volumeMounts.some((m: any) => m.subPath !== undefined && m.name.startsWith('spire'))).toBe(false);
      }
    }
  });

  it('GIVEN K8S_SPIRE_TOKEN_SECONDS=600 THEN each pod projects a token of 600 s, and only the pod templates change: every rollout step is replaced, the hand-off and the ConfigMap stay', () => {
    const short = render({ ...SPIRE_ENV, K8S_SPIRE_TOKEN_SECONDS: '600' }).all!.json;
    const lives = (json: any) => entries(json, 'resource', 'kubernetes_manifest').map(([, d]) => d.manifest.spec.template.spec.volumes.find((v: any) => v.name === 'spire-token').projected.sources[0].serviceAccountToken.expirationSeconds);
    expect(lives(all).length).toBeGreaterThan(1);
    expect(lives(all)).toEqual(lives(all).map(() => 3600));
    expect(lives(short)).toEqual(lives(all).map(() => 600));
    // the rollout steps' triggers hash the pod template: a new life is a rollout of each node
    const rollouts = (json: any) => entries(json, 'resource', 'null_resource').filter(([, r]) => r['//'].metadata.path.endsWith('/rollout'));
    expect(rollouts(all)).toHaveLength(lives(all).length);
    for (const [[id, before], [, after]] of rollouts(all).map((r, i) => [r, rollouts(short)[i]!] as const)) {
      expect(after.triggers.template, id).not.toBe(before.triggers.template);
      expect(after.triggers.image, id).toBe(before.triggers.image);
    }
    const handoff = (json: any) => json.resource.null_resource[addressOf(json, 'null_resource', '/spire/handoff').split('.')[1]!];
    expect(handoff(short).triggers).toEqual(handoff(all).triggers);
    expect(short.resource.kubernetes_config_map_v1).toEqual(all.resource.kubernetes_config_map_v1);
  });

  it('has the key path (and any staged path) in no input or trigger, only $SSH_PRIVATE_KEY_FILE read at run time', () => {
    for (const { text } of Object.values(g)) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('/very/secret');
      expect(text).not.toContain(STAGED);
      expect(text).not.toContain('deploy-spire-key-');
      expect(text).toContain('$${SSH_PRIVATE_KEY_FILE:?');
    }
    // another key path gives the same graph: the path can change at every run
    const other = render({ ...SPIRE_ENV, SSH_PRIVATE_KEY_FILE: STAGED });
    for (const t of Object.keys(g)) expect(other[t]!.text).toBe(g[t]!.text);
  });

  it('is deterministic: the same model gives byte-identical JSON', () => {
    const again = render(SPIRE_ENV);
    for (const t of Object.keys(g)) expect(again[t]!.text).toBe(g[t]!.text);
  });

  it('runs ssh and kubectl as the run found them (DEPLOY_SSH, DEPLOY_KUBECTL), with PATH as the fallback', () => {
    const handoff = all.resource.null_resource[addressOf(all, 'null_resource', '/spire/handoff').split('.')[1]!];
    const create: string = handoff.provisioner[0]['local-exec'].command;
    expect(create).toContain('"$${DEPLOY_SSH:-ssh}" -i "$key"');
    expect(create).toContain('"$${DEPLOY_KUBECTL:-kubectl}"');
    expect(handoff.provisioner[1]['local-exec'].command).toContain('"$${DEPLOY_SSH:-ssh}" -i "$key"');
  });

  it("lets the hand-off's destroy step accept the run's current host key of the same spire node (a node made again), and only there", () => {
    const handoff = all.resource.null_resource[addressOf(all, 'null_resource', '/spire/handoff').split('.')[1]!];
    const destroy: string = handoff.provisioner[1]['local-exec'].command;
    expect(destroy).toContain(`if [ "$\${DEPLOY_SPIRE_NODE:-}" = "\${self.triggers.spire_node}" ] && [ -n "$\${DEPLOY_SPIRE_HOST_KEY:-}" ]; then printf 'spire-node %s\\n' "$DEPLOY_SPIRE_HOST_KEY" >>"$kh"; fi`);
    expect(handoff.provisioner[0]['local-exec'].command).not.toContain('DEPLOY_SPIRE_HOST_KEY');
  });
});

describe('the target graph without the SPIRE coordinates', () => {
  it('has no SPIRE resource, read or volume, even with the ssh layers set for other methods', () => {
    const g = render({ SSH_USER: 'deploy', SSH_PRIVATE_KEY_FILE: KEY });
    for (const { text, json } of Object.values(g)) {
      expect(text).not.toMatch(/spire/i);
      expect(text).not.toContain(KEY);
      expect(json.resource.kubernetes_config_map_v1).toBeUndefined();
      expect(entries(json, 'resource', 'null_resource').filter(([k]) => k.includes('handoff'))).toEqual([]);
      for (const [, d] of entries(json, 'resource', 'kubernetes_manifest')) {
        expect(d.manifest.spec.template.spec.volumes.map((v: any) => v.name)).toEqual(['state', 'run', 'run-lock', 'tmp']);
      }
    }
    // and is the graph of a run that never heard of SPIRE
    const plain = render({});
    for (const t of Object.keys(g)) expect(g[t]!.text).toBe(plain[t]!.text);
  });
});

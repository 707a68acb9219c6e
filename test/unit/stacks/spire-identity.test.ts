import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { App, TerraformStack } from 'cdktf';
import { KubernetesProvider } from '@cdktf/provider-kubernetes/lib/provider/index.js';
import { NullProvider } from '@cdktf/provider-null/lib/provider/index.js';
import { ExternalProvider } from '@cdktf/provider-external/lib/provider/index.js';
import { SpireIdentity, type SpireGraphCoordinates } from '../../../stacks/spire-identity.js';
import { dropFile, spireNames } from '../../../src/contract/spire/spire-names.js';
import { stepWords } from '../../support/step-words.js';

const spire: SpireGraphCoordinates = {
  node: 'spire.central.example.org',
  sshUser: 'deploy',
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X',
  sshOptions: ['-o', 'Port=2222'],
  apiServer: 'https://api.cluster.example.org:6443',
  tokenSeconds: 3600,
};

function render(over: Partial<SpireGraphCoordinates> = {}, nodes = ['alpha', 'beta']): any {
  const app = new App({ outdir: '/nonexistent', skipValidation: true, stackTraces: false });
  const stack = new TerraformStack(app, 'g1-all');
  new KubernetesProvider(stack, 'kubernetes', {});
  new NullProvider(stack, 'null', {});
  new ExternalProvider(stack, 'external', {});
  new SpireIdentity(stack, 'spire', { namespace: 'fediversity', nodes, spire: { ...spire, ...over }, labels: { 'app.kubernetes.io/managed-by': 'deploy' }, after: [] });
  return JSON.parse(JSON.stringify(stack.toTerraform()));
}

const one = (json: any, kind: 'resource' | 'data', type: string, id?: string) => {
  const all = Object.entries<any>(json[kind][type]);
  const hit = id === undefined ? all : all.filter(([k]) => k.includes(id));
  expect(hit, `${type} ${id ?? ''}`).toHaveLength(1);
  return hit[0]![1];
};

describe('SPIRE identity of a target', () => {
  const g = render();

  it('GIVEN the coordinates THEN the spire-server account may review tokens, get nodes, and get pods of its namespace only', () => {
    expect(one(g, 'resource', 'kubernetes_service_account_v1').metadata).toMatchObject({ name: 'spire-server', namespace: 'fediversity' });
    expect(one(g, 'resource', 'kubernetes_cluster_role_v1').rule).toEqual([{ api_groups: [''], resources: ['nodes'], verbs: ['get'] }]);
    const bindings = Object.values<any>(g.resource.kubernetes_cluster_role_binding_v1);
    expect(bindings.map((b) => b.role_ref.name).sort()).toEqual(['deploy-spire-server-fediversity', 'system:auth-delegator']);
    expect(one(g, 'resource', 'kubernetes_cluster_role_v1').metadata.name).toBe('deploy-spire-server-fediversity');
    for (const b of bindings) expect(b.subject).toEqual([{ kind: 'ServiceAccount', name: 'spire-server', namespace: 'fediversity' }]);
    expect(bindings.map((b) => b.metadata.name).sort()).toEqual(['deploy-spire-server-fediversity', 'deploy-spire-server-fediversity-auth-delegator']);
    const role = one(g, 'resource', 'kubernetes_role_v1');
    expect(role.metadata.namespace).toBe('fediversity');
    expect(role.rule).toEqual([{ api_groups: [''], resources: ['pods'], verbs: ['get'] }]);
  });

  it('GIVEN the coordinates THEN the machine ID and the bundle are read at plan time over ssh with the host key, and the key only from the environment', () => {
    for (const id of ['machine-id', 'bundle']) {
      const d = one(g, 'data', 'external', id);
      expect(d.depends_on).toBeUndefined();
      const script: string = d.program[2];
      expect(script).toContain('$${SSH_PRIVATE_KEY_FILE:?');
      expect(script).toContain(`'spire-node ${spire.hostKey}\n'`);
      expect(script).toContain("'StrictHostKeyChecking=yes'");
      expect(script.indexOf("'StrictHostKeyChecking=yes'")).toBeLessThan(script.indexOf("'Port=2222'"));
      expect(script).toContain("-l 'deploy' -- 'spire.central.example.org'");
      expect(script).toContain(`deploy_line spire failed 'spire.central.example.org' "the spire node spire.central.example.org is not reachable over ssh as deploy`);
    }
    expect(one(g, 'data', 'external', 'bundle').program[2]).toContain('spire-server bundle show -format pem');
  });

  it('GIVEN the bundle read THEN the ConfigMap spire-agent holds it as bundle.crt', () => {
    const cm = one(g, 'resource', 'kubernetes_config_map_v1');
    expect(cm.metadata).toMatchObject({ name: 'spire-agent', namespace: 'fediversity' });
    expect(cm.data['bundle.crt']).toMatch(/^\$\{base64decode\(data\.external\.spire_spire-bundle_[A-Z0-9]+\.result\["bundle_b64"\]\)\}$/);
  });

  it('GIVEN the hand-off THEN it is replaced by a new spire machine ID or new names, runs after the RBAC, and pipes the token', () => {
    const h = one(g, 'resource', 'null_resource');
    expect(h.triggers).toMatchObject({ spire_node: spire.node, ssh_user: 'deploy', host_key: spire.hostKey, ssh_options: "'-o' 'Port=2222'", api_server: spire.apiServer });
    expect(h.triggers.spire_machine_id).toMatch(/^\$\{data\.external\.spire_spire-machine-id_[A-Z0-9]+\.result\["machine_id"\]\}$/);
    expect(h.depends_on).toHaveLength(3);
    const [create, destroy] = h.provisioner.map((p: any) => p['local-exec']);
    expect(create.when).toBeUndefined();
    expect(create.command).toContain('token=$(kc -n \'fediversity\' create token spire-server');
    expect(create.command).toMatch(/\| spire_ssh '/);
    expect(create.command).toContain("server='https://api.cluster.example.org:6443'");
    expect(destroy.when).toBe('destroy');
    expect(destroy.command).toContain('-l "${self.triggers.ssh_user}" -- "${self.triggers.spire_node}"');
    expect(destroy.command).toContain("'spire-node ${self.triggers.host_key}\n'");
    expect(destroy.command).toContain("rm -rf '\\''/var/lib/spire/k8s/fediversity'\\''");
  });

  it('GIVEN the drop-files THEN each node has its alias (k8s_psat selectors) and its host entry', () => {
    expect(JSON.parse(dropFile('fediversity', 'alpha'))).toEqual({
      entries: [
        {
          spiffe_id: 'spiffe://fediversity/k8s/fediversity/fediversity/node-alpha',
          parent_id: 'spiffe://fediversity/spire/server',
          selectors: [
            { type: 'k8s_psat', value: 'cluster:fediversity.alpha' },
            { type: 'k8s_psat', value: 'agent_ns:fediversity' },
            { type: 'k8s_psat', value: 'agent_sa:node-alpha' },
          ],
        },
        { spiffe_id: 'spiffe://fediversity/host/fediversity-alpha', parent_id: 'spiffe://fediversity/k8s/fediversity/fediversity/node-alpha', selectors: [{ type: 'unix', value: 'uid:0' }] },
      ],
    });
    expect(spireNames.kubeconfig('fediversity')).toBe('/var/lib/spire/k8s/fediversity/kubeconfig');
    const h = one(g, 'resource', 'null_resource');
    expect(render({}, ['alpha']).resource.null_resource[Object.keys(g.resource.null_resource)[0]!].triggers.names).not.toBe(h.triggers.names);
  });

  it('GIVEN no API server THEN the kubeconfig server is read at run time; the render is deterministic', () => {
    const h = one(render({ apiServer: undefined }), 'resource', 'null_resource');
    expect(h.triggers.api_server).toBe('');
    expect(h.provisioner[0]['local-exec'].command).toContain("server=$(kc config view --minify -o jsonpath='{.clusters[0].cluster.server}')");
    expect(JSON.stringify(render())).toBe(JSON.stringify(g));
  });

  /** Runs the bundle read's program (as tofu's external provider would) with a fake ssh. */
  async function runBundleRead(fakeSsh: string): Promise<{ exitCode: number; stdout: string; stderr: string; calls: number }> {
    const dir = await mkdtemp(join(tmpdir(), 'spire-read-'));
    try {
      const ssh = join(dir, 'ssh');
      await writeFile(ssh, `#!/bin/sh\nn=$(cat "${dir}/calls" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >"${dir}/calls"\n${fakeSsh}\n`);
      await chmod(ssh, 0o755);
      await writeFile(join(dir, 'key'), 'not a key', { mode: 0o600 });
      const program: string[] = one(g, 'data', 'external', 'bundle').program;
      // tofu reads the program as a template: `$${` is a literal `${`
      const script = program[2]!.replaceAll('$${', '${').replaceAll('%%{', '%{');
      const r = await execa(program[0]!, [program[1]!, script, program[3]!], { input: '{}', reject: false, env: { PATH: process.env.PATH, DEPLOY_SSH: ssh, SSH_PRIVATE_KEY_FILE: join(dir, 'key') } });
      const calls = Number((await execa('cat', [join(dir, 'calls')], { reject: false })).stdout || 0);
      return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, calls };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('GIVEN a SPIRE server that fails once (restarting) THEN the plan-time read tries again and gets the bundle', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const r = await runBundleRead(`if [ "$n" -eq 1 ]; then echo 'api.sock: connect: no such file or directory' >&2; exit 1; fi\nprintf '%s\\n' '${pem.replaceAll('\n', '\\n')}'`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.calls).toBe(2);
    expect(Buffer.from(JSON.parse(r.stdout).bundle_b64, 'base64').toString()).toContain('-----BEGIN CERTIFICATE-----');
  }, 20_000);

  it('GIVEN a spire node out of reach (ssh exits 255) THEN the read fails at once naming the node', async () => {
    const r = await runBundleRead(`echo 'ssh: connect to host spire.central.example.org port 2222: Connection refused' >&2; exit 255`);
    expect(r.exitCode).not.toBe(0);
    expect(r.calls).toBe(1);
    expect(stepWords(r.stderr)).toContain('deploy: the spire node spire.central.example.org is not reachable over ssh as deploy (reading the trust bundle)');
    expect(r.stderr).toContain('Connection refused');
  });
});

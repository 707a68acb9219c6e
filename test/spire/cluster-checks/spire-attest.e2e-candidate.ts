// Needs the running local cluster (npm run cluster:up) and the SPIRE build. Run by hand on 2026-11-30 and
// passing; not part of any vitest project yet: to run it in the suite, move it to
// test/e2e/<name>.test.ts behind the e2e harness (imports then one level up: '../../src/...').
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { App, TerraformStack } from 'cdktf';
import { KubernetesProvider } from '@cdktf/provider-kubernetes/lib/provider/index.js';
import { NullProvider } from '@cdktf/provider-null/lib/provider/index.js';
import { ExternalProvider } from '@cdktf/provider-external/lib/provider/index.js';
import { NamespaceV1 } from '@cdktf/provider-kubernetes/lib/namespace-v1/index.js';
import { expect, it } from 'vitest';
import { resolveSpireCoordinates } from '../../../src/config/spire-coordinates.js';
import { runOnSpireNode } from '../../../src/spire/spire-ssh.js';
import { cacheDir, providerEnv, requireTool } from '../../../src/tools/discover.js';
import { SpireIdentity } from '../../../stacks/spire-identity.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const NS = 'spire-attest-check';
it('agent attests with k8s_psat', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'spire-at-'));
  const nodeEnv = { ...process.env, DEPLOY_STATE_DIR: stateDir, SPIRE_NODE_NETNS: 'dpl-spat', SPIRE_NODE_HOST_IP: '10.253.5.1', SPIRE_NODE_IP: '10.253.5.2' };
  const up = await execa('bash', [join(repo, 'test/spire/spire-node.sh'), 'up'], { env: nodeEnv });
  const kubeconfig = process.env.KUBE_CONFIG_PATH ?? join(process.env.DEPLOY_STATE_DIR ?? join(process.env.XDG_STATE_HOME ?? join(homedir(), '.local/state'), 'k8s-deployer'), 'cluster', 'admin.kubeconfig');
  const kubectl = requireTool('kubectl').path;
  const kc = (args: string[], input?: string) => execa(kubectl, ['--kubeconfig', kubeconfig, ...args], { input });
  let agent: ReturnType<typeof execa> | undefined;
  let dir = '';
  let env: any;
  const tofu = requireTool('tofu').path;
  try {
    const out = await execa('bash', ['-c', 'set -a; . "$1"; env -0', 'load', up.stdout.trim()], { env: {} });
    const vars = Object.fromEntries(out.stdout.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const r = resolveSpireCoordinates(vars);
    if (!r.ok || !r.value) throw new Error('no coords');
    const spire = r.value;
    const { sshPrivateKeyFile: _k, ...gc } = spire;
    const app = new App({ outdir: '/nonexistent', skipValidation: true, stackTraces: false });
    const stack = new TerraformStack(app, 'at');
    new KubernetesProvider(stack, 'kubernetes', {});
    new NullProvider(stack, 'null', {});
    new ExternalProvider(stack, 'external', {});
    const ns = new NamespaceV1(stack, 'ns', { metadata: { name: NS } });
    new SpireIdentity(stack, 'spire', { namespace: NS, nodes: ['alpha'], spire: gc, labels: {}, after: [ns] });
    dir = join(stateDir, 'graph');
    await mkdir(dir);
    await writeFile(join(dir, 'cdk.tf.json'), JSON.stringify(stack.toTerraform(), null, 2));
    env = { ...process.env, ...providerEnv(process.env), SSH_PRIVATE_KEY_FILE: spire.sshPrivateKeyFile, KUBE_CONFIG_PATH: kubeconfig, DEPLOY_KUBECTL: kubectl };
    await execa(tofu, ['init', '-input=false'], { cwd: dir, env });
    const applied = await execa(tofu, ['apply', '-auto-approve', '-input=false', '-no-color'], { cwd: dir, env, reject: false, all: true });
    expect(applied.exitCode, applied.all).toBe(0);
    const sync = await execa('bash', [join(repo, 'test/spire/spire-node.sh'), 'sync'], { env: nodeEnv, reject: false });
    console.log(sync.stderr);
    expect(sync.exitCode).toBe(0);

    await kc(['-n', NS, 'create', 'serviceaccount', 'node-alpha']);
    await kc(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'alpha', namespace: NS }, spec: { serviceAccountName: 'node-alpha', automountServiceAccountToken: false, containers: [{ name: 'p', image: 'deploy.local/pause:catatonit', imagePullPolicy: 'Never' }] } }));
    await kc(['-n', NS, 'wait', '--for=condition=Ready', 'pod/alpha', '--timeout=90s']);
    const uid = (await kc(['-n', NS, 'get', 'pod', 'alpha', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const token = (await kc(['-n', NS, 'create', 'token', 'node-alpha', '--audience', 'spire-server', '--bound-object-kind', 'Pod', '--bound-object-name', 'alpha', '--bound-object-uid', uid, '--duration', '10m'])).stdout;
    const a = join(stateDir, 'agent');
    await mkdir(join(a, 'data'), { recursive: true });
    await writeFile(join(a, 'token'), token, { mode: 0o600 });
    const bundle = (await kc(['-n', NS, 'get', 'configmap', 'spire-agent', '-o', 'jsonpath={.data.bundle\\.crt}'])).stdout;
    expect(bundle).toContain('BEGIN CERTIFICATE');
    await writeFile(join(a, 'bundle.crt'), bundle);
    await writeFile(join(a, 'agent.conf'), `agent {
  data_dir = "${a}/data"
  log_level = "DEBUG"
  server_address = "10.253.5.2"
  server_port = "8081"
  socket_path = "${a}/api.sock"
  trust_bundle_path = "${a}/bundle.crt"
  trust_domain = "fediversity"
}
plugins {
  NodeAttestor "k8s_psat" { plugin_data { cluster = "${NS}"
    token_path = "${a}/token" } }
  KeyManager "memory" { plugin_data {} }
  WorkloadAttestor "unix" { plugin_data {} }
}
`);
    const agentBin = join(cacheDir(), 'spire', '1.13.3', 'spire-agent');
    agent = execa(agentBin, ['run', '-config', join(a, 'agent.conf')], { reject: false, all: true });
    let svid = '';
    for (let i = 0; i < 60 && !svid.includes('host/'); i++) {
      await new Promise((res) => setTimeout(res, 1000));
      const f = await execa(agentBin, ['api', 'fetch', 'x509', '-socketPath', join(a, 'api.sock')], { reject: false });
      svid = f.stdout;
    }
    console.log('SVID:', svid.split('\n').slice(0, 4).join('\n'));
    expect(svid).toContain(`spiffe://fediversity/host/${NS}-alpha`);
    const agents = await runOnSpireNode(spire, ['spire-server', 'agent', 'list']);
    console.log(agents.stdout);
    expect(agents.stdout).toMatch(/Attestation type\s+: k8s_psat/);
  } finally {
    if (agent) {
      agent.kill('SIGTERM');
      const res: any = await agent;
      if (!String(res.all ?? '').includes('SVID')) console.log('agent log tail:', String(res.all ?? '').split('\n').slice(-15).join('\n'));
    }
    if (dir) await execa(tofu, ['destroy', '-auto-approve', '-input=false', '-no-color'], { cwd: dir, env, reject: false });
    await execa('bash', [join(repo, 'test/spire/spire-node.sh'), 'down'], { env: nodeEnv, reject: false });
    await rm(stateDir, { recursive: true, force: true });
  }
}, 600_000);

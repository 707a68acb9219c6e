// Needs the running local cluster (npm run cluster:up) and the SPIRE build. Run by hand on 2026-11-30 and
// passing; not part of any vitest project yet: to run it in the suite, move it to
// test/e2e/<name>.test.ts behind the e2e harness (imports then one level up: '../../src/...').
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
import { providerEnv, requireTool } from '../../../src/tools/discover.js';
import { SpireIdentity } from '../../../stacks/spire-identity.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const NS = 'spire-handoff-check';
it('hand-off against the real cluster', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'spire-ho-'));
  const nodeEnv = { ...process.env, DEPLOY_STATE_DIR: stateDir, SPIRE_NODE_NETNS: 'dpl-spho', SPIRE_NODE_HOST_IP: '10.253.4.1', SPIRE_NODE_IP: '10.253.4.2' };
  const up = await execa('bash', [join(repo, 'test/spire/spire-node.sh'), 'up'], { env: nodeEnv });
  try {
    const out = await execa('bash', ['-c', 'set -a; . "$1"; env -0', 'load', up.stdout.trim()], { env: {} });
    const vars = Object.fromEntries(out.stdout.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const r = resolveSpireCoordinates(vars);
    if (!r.ok || !r.value) throw new Error('no coords');
    const spire = r.value;
    const { sshPrivateKeyFile: _k, ...gc } = spire;
    const app = new App({ outdir: '/nonexistent', skipValidation: true, stackTraces: false });
    const stack = new TerraformStack(app, 'ho');
    new KubernetesProvider(stack, 'kubernetes', {});
    new NullProvider(stack, 'null', {});
    new ExternalProvider(stack, 'external', {});
    const ns = new NamespaceV1(stack, 'ns', { metadata: { name: NS } });
    new SpireIdentity(stack, 'spire', { namespace: NS, nodes: ['alpha', 'beta'], spire: gc, labels: {}, after: [ns] });
    const dir = join(stateDir, 'graph');
    await mkdir(dir);
    await writeFile(join(dir, 'cdk.tf.json'), JSON.stringify(stack.toTerraform(), null, 2));
    const kubeconfig = process.env.KUBE_CONFIG_PATH ?? join(process.env.DEPLOY_STATE_DIR ?? join(process.env.XDG_STATE_HOME ?? join(homedir(), '.local/state'), 'k8s-deployer'), 'cluster', 'admin.kubeconfig');
    const env = { ...process.env, ...providerEnv(process.env), SSH_PRIVATE_KEY_FILE: spire.sshPrivateKeyFile, KUBE_CONFIG_PATH: kubeconfig, DEPLOY_KUBECTL: requireTool('kubectl').path };
    const tofu = requireTool('tofu', env).path;
    await execa(tofu, ['init', '-input=false'], { cwd: dir, env });
    const t0 = Date.now();
    const applied = await execa(tofu, ['apply', '-auto-approve', '-input=false', '-no-color'], { cwd: dir, env, reject: false, all: true });
    console.log('apply ms', Date.now() - t0, applied.exitCode, applied.all!.split('\n').slice(-5).join('\n'));
    expect(applied.exitCode).toBe(0);
    const st = await readFile(join(dir, 'terraform.tfstate'), 'utf8');
    console.log('state eyJ:', st.match(/.{120}eyJhbGci.{0,20}/s)?.[0]);
    expect(st).not.toMatch(/eyJhbGci/);
    expect(st).not.toContain(spire.sshPrivateKeyFile);
    expect(applied.all).not.toMatch(/eyJhbGci/);
    const ls = await runOnSpireNode(spire, ['stat', '-c', "'%a %n'", `/var/lib/spire/k8s/${NS}/kubeconfig`, `/var/lib/spire/k8s/${NS}/entries/*`]);
    console.log(ls.stdout);
    expect(ls.stdout).toContain(`600 /var/lib/spire/k8s/${NS}/kubeconfig`);
    const kubectl = requireTool('kubectl').path;
    const check = await runOnSpireNode(spire, [kubectl, '--kubeconfig', `/var/lib/spire/k8s/${NS}/kubeconfig`, 'auth', 'can-i', 'create', 'tokenreviews', ';',
      kubectl, '--kubeconfig', `/var/lib/spire/k8s/${NS}/kubeconfig`, 'get', 'node', 'deploy-node', '-o', 'name', ';',
      kubectl, '--kubeconfig', `/var/lib/spire/k8s/${NS}/kubeconfig`, 'auth', 'can-i', 'get', 'pods', '-n', NS, ';',
      kubectl, '--kubeconfig', `/var/lib/spire/k8s/${NS}/kubeconfig`, 'auth', 'can-i', 'get', 'pods', '-n', 'default', '||', 'true']);
    console.log(check.stdout);
    expect(check.stdout.split('\n')).toEqual(['yes', 'node/deploy-node', 'yes', 'no']);
    const plan2 = await execa(tofu, ['plan', '-detailed-exitcode', '-input=false', '-no-color'], { cwd: dir, env, reject: false, all: true });
    console.log('second plan exit', plan2.exitCode, plan2.all!.split('\n').slice(-3).join('\n'));
    expect(plan2.exitCode).toBe(0);
    const destroyed = await execa(tofu, ['destroy', '-auto-approve', '-input=false', '-no-color'], { cwd: dir, env, reject: false, all: true });
    console.log('destroy', destroyed.exitCode, destroyed.all!.split('\n').slice(-3).join('\n'));
    expect(destroyed.exitCode).toBe(0);
    const left = await runOnSpireNode(spire, ['ls', '/var/lib/spire/k8s']);
    expect(left.stdout).not.toContain(NS);
  } finally {
    await execa('bash', [join(repo, 'test/spire/spire-node.sh'), 'down'], { env: nodeEnv, reject: false });
    await rm(stateDir, { recursive: true, force: true });
  }
}, 600_000);

/**
 * The SPIRE part of the graph (stacks/spire-identity.ts) with the real tofu and providers
 * against the real test spire node: init offline and validate; a plan reads the machine ID
 * and the trust bundle from the node over ssh into the hand-off trigger and the ConfigMap;
 * the key's path is nowhere in the graph or the plan; the spire node down fails the plan
 * with a message naming it; the destroy step's command removes the namespace's files there.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { App, TerraformStack } from 'cdktf';
import { KubernetesProvider } from '@cdktf/provider-kubernetes/lib/provider/index.js';
import { NullProvider } from '@cdktf/provider-null/lib/provider/index.js';
import { ExternalProvider } from '@cdktf/provider-external/lib/provider/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpireCoordinates } from '../../src/config/spire-coordinates.js';
import { loadSpireEnv } from '../spire/spire-env.js';
import { runOnSpireNode } from './spire-node-ssh.js';
import { requireTool } from '../../src/tools/discover.js';
import { providerEnv } from '../../src/tools/providers.js';
import { initGraph, planGraph, validateGraph } from '../../src/tools/tofu/tofu.js';
import { SpireIdentity } from '../../stacks/spire-identity.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(repo, 'test', 'spire', 'spire-node.sh');
const netns = `dpl-spg-${process.pid % 10000}`;
// Its own /30 per run (third octet from the pid): another run of this suite at the same time
// (another checkout) gets other addresses, and spire-node.sh refuses addresses in use.
const subnet = `10.253.${1 + (process.pid % 250)}`;
const NS = 'spire-graph';

let stateDir: string;
let graphDir: string;
let nodeEnv: NodeJS.ProcessEnv;
let tofuEnv: NodeJS.ProcessEnv;
let spire: SpireCoordinates;
let graphText: string;

function spireNode(verb: 'up' | 'down') {
  return execa('bash', [script, verb], { env: nodeEnv, reject: false, timeout: 180_000 });
}

beforeAll(async () => {
  const build = await execa('bash', [join(repo, 'toolchain', 'spire', 'build.sh')], { reject: false, timeout: 3_600_000 });
  expect(build.exitCode, build.stderr).toBe(0);
  stateDir = await mkdtemp(join(tmpdir(), 'spire-graph-'));
  nodeEnv = { ...process.env, DEPLOY_STATE_DIR: stateDir, SPIRE_NODE_NETNS: netns, SPIRE_NODE_HOST_IP: `${subnet}.9`, SPIRE_NODE_IP: `${subnet}.10` };
  const up = await spireNode('up');
  expect(up.exitCode, up.stderr).toBe(0);
  ({ spire } = await loadSpireEnv(up.stdout.trim()));

  const { sshPrivateKeyFile: _key, ...graphCoordinates } = spire;
  const app = new App({ outdir: '/nonexistent', skipValidation: true, stackTraces: false });
  const stack = new TerraformStack(app, 'spire-graph');
  new KubernetesProvider(stack, 'kubernetes', {});
  new NullProvider(stack, 'null', {});
  new ExternalProvider(stack, 'external', {});
  new SpireIdentity(stack, 'spire', { namespace: NS, nodes: ['alpha', 'beta'], spire: { ...graphCoordinates, apiServer: 'https://10.255.254.1:6443' }, labels: {}, after: [] });
  graphText = JSON.stringify(stack.toTerraform(), null, 2);
  graphDir = join(stateDir, 'graph');
  await mkdir(graphDir);
  await writeFile(join(graphDir, 'cdk.tf.json'), graphText);
  // The key reaches the graph's shell steps only as the run's environment.
  tofuEnv = { ...process.env, ...providerEnv(process.env), SSH_PRIVATE_KEY_FILE: spire.sshPrivateKeyFile };
  await initGraph({ dir: graphDir, env: tofuEnv });
}, 3_700_000);

afterAll(async () => {
  await spireNode('down');
  await rm(stateDir, { recursive: true, force: true });
});

describe('the SPIRE graph with the real tofu and the real spire node', () => {
  it('GIVEN the graph THEN tofu validates it, and the key path is not in it', async () => {
    const r = await validateGraph({ dir: graphDir, env: tofuEnv });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(graphText).not.toContain(spire.sshPrivateKeyFile);
    expect(graphText).not.toContain(stateDir);
  });

  it('GIVEN the node up WHEN planned THEN the reads give the ConfigMap the bundle and the hand-off the machine ID, and no key path is in the plan', async () => {
    const plan = await planGraph({ dir: graphDir, env: tofuEnv, timeoutMs: 300_000 });
    expect(plan.changes.map((c) => c.type).sort()).toEqual(
      ['kubernetes_cluster_role_binding_v1', 'kubernetes_cluster_role_binding_v1', 'kubernetes_cluster_role_v1', 'kubernetes_config_map_v1', 'kubernetes_role_binding_v1', 'kubernetes_role_v1', 'kubernetes_service_account_v1', 'null_resource'],
    );
    const tofu = requireTool('tofu', tofuEnv);
    const shown = await execa(tofu.path, ['show', '-json', plan.planFile], { cwd: graphDir, env: tofuEnv });
    const json = JSON.parse(shown.stdout);
    const after = (type: string) => json.resource_changes.find((c: any) => c.type === type).change.after;
    const pem = (await runOnSpireNode(spire, ['spire-server', 'bundle', 'show', '-format', 'pem'])).stdout.trim();
    expect(after('kubernetes_config_map_v1').data['bundle.crt']).toBe(`${pem}\n`);
    const id = (await runOnSpireNode(spire, ['cat', '/etc/machine-id'])).stdout.trim();
    expect(after('null_resource').triggers.spire_machine_id).toBe(id);
    expect(shown.stdout).not.toContain(spire.sshPrivateKeyFile);
  });

  it('GIVEN the destroy step of the hand-off WHEN its command runs THEN the namespace directory is gone from the spire node', async () => {
    await runOnSpireNode(spire, ['mkdir', '-p', `/var/lib/spire/k8s/${NS}/entries`, '&&', 'touch', `/var/lib/spire/k8s/${NS}/kubeconfig`]);
    const handoff: any = Object.values(JSON.parse(graphText).resource.null_resource)[0];
    const destroy = handoff.provisioner.find((p: any) => p['local-exec'].when === 'destroy')['local-exec'].command as string;
    // what tofu does with the template: self.triggers, then `$${` -> `${`
    const command = destroy
      .replaceAll('${self.triggers.spire_node}', spire.node)
      .replaceAll('${self.triggers.ssh_user}', spire.sshUser)
      .replaceAll('${self.triggers.host_key}', spire.hostKey)
      .replaceAll('${self.triggers.ssh_options}', handoff.triggers.ssh_options)
      .replaceAll('$${', '${');
    const r = await execa('/bin/sh', ['-c', command], { env: { PATH: process.env.PATH, SSH_PRIVATE_KEY_FILE: spire.sshPrivateKeyFile }, reject: false, timeout: 60_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const left = await runOnSpireNode(spire, ['ls', '/var/lib/spire/k8s']);
    expect(left.stdout.split('\n')).not.toContain(NS);
  });

  it('GIVEN the spire node down WHEN planned THEN the plan fails with a message naming the node', async () => {
    const down = await spireNode('down');
    expect(down.exitCode, down.stderr).toBe(0);
    const e = await planGraph({ dir: graphDir, env: tofuEnv, timeoutMs: 300_000 }).then(() => undefined, (err: unknown) => err as Error);
    expect(e).toBeInstanceOf(Error);
    expect(e!.message).toContain(`the spire node ${spire.node} is not reachable over ssh as root`);
  });
});

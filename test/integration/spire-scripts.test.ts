/**
 * The graph's ssh steps (stacks/spire-scripts.ts) against the real test spire node
 * (test/spire/spire-node.sh), run as tofu runs them: the plan-time reads (machine ID, trust
 * bundle) over ssh with the SPIRE coordinates, the kubeconfig with a token through stdin, and
 * the failures that must name the node (wrong host key, node down).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpireCoordinates } from '../../src/config/spire-coordinates.js';
import { loadSpireEnv } from '../spire/spire-env.js';
import { bundleReadScript, handoffScript, machineIdReadScript } from '../../stacks/spire-scripts.js';
import { runOnSpireNode } from './spire-node-ssh.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(repo, 'test', 'spire', 'spire-node.sh');
const netns = `dpl-sps-${process.pid % 10000}`;
// Its own /30 per run (third octet from the pid): another run of this suite at the same time
// (another checkout) gets other addresses, and spire-node.sh refuses addresses in use.
const subnet = `10.253.${1 + (process.pid % 250)}`;

let stateDir: string;
let env: NodeJS.ProcessEnv;
let spire: SpireCoordinates;

function spireNode(verb: 'up' | 'down') {
  return execa('bash', [script, verb], { env, reject: false, timeout: 180_000 });
}

beforeAll(async () => {
  const build = await execa('bash', [join(repo, 'toolchain', 'spire', 'build.sh')], { reject: false, timeout: 3_600_000 });
  expect(build.exitCode, build.stderr).toBe(0);
  stateDir = await mkdtemp(join(tmpdir(), 'spire-ssh-'));
  env = { ...process.env, DEPLOY_STATE_DIR: stateDir, SPIRE_NODE_NETNS: netns, SPIRE_NODE_HOST_IP: `${subnet}.5`, SPIRE_NODE_IP: `${subnet}.6` };
  const r = await spireNode('up');
  expect(r.exitCode, r.stderr).toBe(0);
  // The coordinates exactly as an operator would export them from the env file.
  ({ spire } = await loadSpireEnv(r.stdout.trim()));
}, 3_700_000);

afterAll(async () => {
  await spireNode('down');
  await rm(stateDir, { recursive: true, force: true });
});

/** Runs a generated script as tofu would: sh -c, the key from the run's environment, `{}` on stdin. */
async function runScript(script: string, opts: { timeoutMs?: number; env?: Record<string, string> } = {}) {
  return execa('/bin/sh', ['-c', script], {
    input: '{}',
    reject: false,
    timeout: opts.timeoutMs ?? 120_000,
    env: { PATH: process.env.PATH, SSH_PRIVATE_KEY_FILE: spire.sshPrivateKeyFile, ...opts.env },
  });
}

/** The value a read printed (`{"<field>": "..."}`), failing the test with its stderr when it failed. */
async function readField(script: string, field: string): Promise<string> {
  const r = await runScript(script);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout)[field] as string;
}
const readBundle = async () => Buffer.from(await readField(bundleReadScript(spire), 'bundle_b64'), 'base64').toString();

describe('ssh to the spire node with the SPIRE coordinates', () => {
  it('GIVEN the node WHEN read at plan time THEN its machine ID and its PEM trust bundle come back', async () => {
    expect(await readField(machineIdReadScript(spire), 'machine_id')).toBe((await readFile(join(stateDir, 'spire-node', 'root', 'etc', 'machine-id'), 'utf8')).trim());
    const bundle = await readBundle();
    expect(bundle).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    // Read twice, the same bytes: a plan after apply sees no change (no churn).
    expect(await readBundle()).toBe(bundle);
  });

  it('GIVEN a secret WHEN it goes to the node THEN it travels on stdin, and the file there is 0600', async () => {
    const secret = `token-${process.pid}-${Date.now()}`;
    // the cluster's side faked: a kubectl that answers the CA and the token
    const kubectl = join(stateDir, 'kubectl');
    await writeFile(kubectl, `#!/bin/sh\ncase "$*" in *certificate-authority-data*) printf 'Q0E=';; *'create token'*) printf '%s' '${secret}';; esac\n`, { mode: 0o755 });
    const script = handoffScript({ ...spire, apiServer: 'https://10.255.254.1:6443' }, 't', []);
    const r = await runScript(script, { env: { DEPLOY_KUBECTL: kubectl, KUBE_CONFIG_PATH: kubectl } });
    expect(r.exitCode, r.stderr).toBe(0);
    const on = await runOnSpireNode(spire, ['stat', '-c', '%a', '/var/lib/spire/k8s/t/kubeconfig', ';', 'grep', 'token:', '/var/lib/spire/k8s/t/kubeconfig']);
    expect(on.stdout.split('\n')).toEqual(['600', `    token: ${secret}`]);
    expect(script).not.toContain(secret);
  });

  it('GIVEN another host key in SSH_NODES WHEN read THEN it fails naming the node, and nothing runs there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spire-key-'));
    try {
      await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
      const other = (await readFile(join(dir, 'k.pub'), 'utf8')).split(' ').slice(0, 2).join(' ');
      const r = await runScript(machineIdReadScript({ ...spire, hostKey: other }));
      expect(r.exitCode).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`the spire node ${spire.node} is not reachable over ssh`);
      expect(r.stderr).toMatch(/HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('GIVEN the node down WHEN the bundle is read (plan, or plan of a destroy) THEN it fails naming the node, within the deadline', async () => {
    const down = await spireNode('down');
    expect(down.exitCode, down.stderr).toBe(0);
    const started = Date.now();
    const r = await runScript(bundleReadScript(spire), { timeoutMs: 30_000 });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`the spire node ${spire.node} is not reachable over ssh as root`);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

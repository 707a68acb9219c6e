/**
 * src/spire/spire-ssh.ts against the real test spire node (test/spire/spire-node.sh): the
 * plan-time reads (machine ID, trust bundle) over ssh with the SPIRE coordinates, a token
 * through stdin, and the failures that must name the node (wrong host key, node down).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpireCoordinates } from '../../src/config/spire-coordinates.js';
import { loadSpireEnv } from '../spire/spire-env.js';
import { ToolError } from '../../src/errors.js';
import { readSpireMachineId, readTrustBundle, runOnSpireNode } from '../../src/spire/spire-ssh.js';

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

async function failureOf(p: Promise<unknown>): Promise<ToolError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(ToolError);
  return e as ToolError;
}

describe('ssh to the spire node with the SPIRE coordinates', () => {
  it('GIVEN the node WHEN read at plan time THEN its machine ID and its PEM trust bundle come back', async () => {
    expect(await readSpireMachineId(spire)).toBe((await readFile(join(stateDir, 'spire-node', 'root', 'etc', 'machine-id'), 'utf8')).trim());
    const bundle = await readTrustBundle(spire);
    expect(bundle).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    // Read twice, the same bytes: a plan after apply sees no change (no churn).
    expect(await readTrustBundle(spire)).toBe(bundle);
  });

  it('GIVEN a secret WHEN it goes to the node THEN it travels on stdin, and the file there is 0600', async () => {
    const secret = `token-${process.pid}-${Date.now()}`;
    await runOnSpireNode(spire, ['sh', '-c', "'umask 077; mkdir -p /var/lib/spire/k8s/t && cat > /var/lib/spire/k8s/t/kubeconfig'"], { input: secret });
    const r = await runOnSpireNode(spire, ['stat', '-c', '%a', '/var/lib/spire/k8s/t/kubeconfig', ';', 'cat', '/var/lib/spire/k8s/t/kubeconfig']);
    expect(r.stdout.split('\n')).toEqual(['600', secret]);
    expect(r.command).not.toContain(secret);
  });

  it('GIVEN another host key in SSH_NODES WHEN read THEN it fails naming the node, and nothing runs there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spire-key-'));
    try {
      await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
      const other = (await readFile(join(dir, 'k.pub'), 'utf8')).split(' ').slice(0, 2).join(' ');
      const e = await failureOf(readSpireMachineId({ ...spire, hostKey: other }));
      expect(e.message).toContain(`the spire node ${spire.node} is not reachable over ssh`);
      expect(e.message).toMatch(/HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('GIVEN the node down WHEN the bundle is read (plan, or plan of a destroy) THEN it fails naming the node, within the deadline', async () => {
    const down = await spireNode('down');
    expect(down.exitCode, down.stderr).toBe(0);
    const started = Date.now();
    const e = await failureOf(readTrustBundle(spire, { timeoutMs: 30_000 }));
    expect(e.message).toContain(`the spire node ${spire.node} is not reachable over ssh as root`);
    expect(e.exitCode).toBe(3);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

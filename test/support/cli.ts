import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured streams and an explicit environment. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): Promise<CliRun> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d) => (stdout += String(d)));
  err.on('data', (d) => (stderr += String(d)));
  const code = await run(['node', 'deploy', ...args], { stdout: out, stderr: err, env, cwd });
  return { code, stdout, stderr };
}

export async function tempDir(prefix = 'deploy-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeJson(file: string, data: unknown): Promise<string> {
  await writeFile(file, typeof data === 'string' ? data : JSON.stringify(data, null, 2));
  return file;
}

export async function listTree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true }).catch(() => [])).sort();
}

/** A valid plan with 3 nodes and 2 apps, plus one node a submission can turn off. */
export function samplePlan(): Record<string, any> {
  return {
    version: 1,
    group: 'g1',
    nodes: {
      alpha: { image: { archive: 'images/alpha.tar', tag: 'a1' }, apps: ['web'] },
      beta: { image: { archive: '/abs/beta.tar', tag: 'b1' }, apps: ['web', 'mail'], persistentPaths: ['/var/lib/beta', '/etc/keys'] },
      gamma: { image: { archive: 'images/gamma.tar', tag: 'c1' }, apps: ['mail'], firewall: { adminSources: ['192.0.2.0/24'] } },
      delta: { image: { archive: 'images/delta.tar', tag: 'd1' }, apps: [] },
    },
    roster: { spiffeProvider: null },
  };
}

/** samplePlan whose roster names the spire node of a central group: for runs with the SPIRE coordinates. */
export function spirePlan(): Record<string, any> {
  return { ...samplePlan(), roster: { spiffeProvider: { group: 'central', node: 'spire' } } };
}

/** The spire node of spirePlan's roster, as the SPIRE coordinates name it, and its ssh host key. */
export const SPIRE_NODE = 'spire.central.example.org';
export const SPIRE_HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnU1vq8oTjWkDmmXG0vWq4m7Kq8lYk3dQ2dN3bq7c0X';

/** The SPIRE coordinates (K8S_SPIRE_NODE, SSH_*) of that node, for loadCoordinates. */
export function spireEnv(opts: { keyFile?: string; sshOpts?: string[] } = {}): Record<string, string> {
  return {
    K8S_SPIRE_NODE: SPIRE_NODE,
    SSH_USER: 'deploy',
    SSH_PRIVATE_KEY_FILE: opts.keyFile ?? '/run/keys/id',
    SSH_NODES: JSON.stringify({ [SPIRE_NODE]: { hostKey: SPIRE_HOST_KEY, ...(opts.sshOpts ? { sshOpts: opts.sshOpts } : {}) } }),
  };
}

export const baseEnv = { K8S_REGISTRY: 'reg.test:5000', HOME: '/nonexistent-home' } as NodeJS.ProcessEnv;

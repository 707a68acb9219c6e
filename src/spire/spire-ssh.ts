/**
 * Runs a command on the spire node over ssh with the SPIRE coordinates (FR-017), with the
 * options of src/contract/spire-ssh-options.ts. Secrets go through stdin, never argv.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpireCoordinates } from '../config/spire-coordinates.js';
import { ToolError } from '../errors.js';
import { runTool, withTail, type RunResult } from '../tools/run.js';
import { knownHostsLine, sshArgs } from '../contract/spire-ssh-options.js';

export interface SpireSshOptions {
  /** Written to the remote command's stdin (a token, a kubeconfig): never in argv. */
  readonly input?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Runs `remote` on the spire node and returns its result; a failure (unreachable node, wrong
 * host key, refused key, failing command) is a ToolError that names the node.
 */
export async function runOnSpireNode(spire: SpireCoordinates, remote: readonly string[], opts: SpireSshOptions = {}): Promise<RunResult> {
  const dir = await mkdtemp(join(tmpdir(), 'deploy-spire-ssh-'));
  try {
    const knownHosts = join(dir, 'known_hosts');
    await writeFile(knownHosts, knownHostsLine(spire), { mode: 0o600 });
    const r = await runTool('ssh', sshArgs(spire, knownHosts, remote), {
      timeoutMs: opts.timeoutMs ?? 60_000,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
      reject: false,
      installHint: 'install the OpenSSH client (Debian: apt-get install openssh-client)',
    });
    if (r.exitCode !== 0) {
      const what = r.exitCode === 255 ? `the spire node ${spire.node} is not reachable over ssh as ${spire.sshUser}` : `\`${remote.join(' ')}\` failed on the spire node ${spire.node} (exit ${r.exitCode})`;
      throw new ToolError(withTail(what, r.tail), {
        hint:
          r.exitCode === 255
            ? 'check K8S_SPIRE_NODE, that the node is up, the host key in SSH_NODES, and that SSH_PRIVATE_KEY_FILE is authorised for SSH_USER'
            : 'check the SPIRE server on the spire node (spire-server healthcheck)',
      });
    }
    return r;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The spire node's machine ID (/etc/machine-id): a new node has a new one. */
export async function readSpireMachineId(spire: SpireCoordinates, opts: SpireSshOptions = {}): Promise<string> {
  const r = await runOnSpireNode(spire, ['cat', '/etc/machine-id'], opts);
  const id = r.stdout.trim();
  if (!/^[0-9a-f]{32}$/.test(id)) {
    throw new ToolError(`the spire node ${spire.node} answered no machine ID (/etc/machine-id: ${JSON.stringify(id.slice(0, 80))})`, {
      hint: 'the spire node must have a systemd machine ID in /etc/machine-id',
    });
  }
  return id;
}

/** The SPIRE server's X.509 trust bundle, PEM (`spire-server bundle show -format pem`). */
export async function readTrustBundle(spire: SpireCoordinates, opts: SpireSshOptions = {}): Promise<string> {
  const r = await runOnSpireNode(spire, ['spire-server', 'bundle', 'show', '-format', 'pem'], opts);
  const pem = r.stdout.trim();
  if (!/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----$/.test(pem)) {
    throw new ToolError(`the SPIRE server on ${spire.node} gave no PEM trust bundle`, {
      hint: 'check the SPIRE server on the spire node (spire-server healthcheck)',
    });
  }
  return `${pem}\n`;
}

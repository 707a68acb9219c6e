/**
 * What tofu's environment needs for the graph's SPIRE steps (stacks/spire-scripts.ts), per
 * run: SSH_PRIVATE_KEY_FILE pointing at a copy of the key staged to a new path, DEPLOY_SSH and
 * DEPLOY_KUBECTL (the programs the run found), and DEPLOY_SPIRE_NODE / DEPLOY_SPIRE_HOST_KEY
 * (the spire node's current host key, for the hand-off's destroy step).
 *
 * Why a copy at a new path: FR-017 ("each deploy stages the key to a different path"), so the
 * graph can never come to depend on where the key lives; and the copy is ours to remove when
 * the run ends, also on failure, on an interrupt and on a third Ctrl-C (process exit).
 */
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { SpireGraphCoordinates } from '../config/spire-coordinates.js';
import { findTool, requireTool } from '../tools/discover.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface SpireRunAccess {
  /** Over tofu's environment: SSH_PRIVATE_KEY_FILE, DEPLOY_SSH, DEPLOY_KUBECTL, DEPLOY_SPIRE_* (each when there is one). */
  readonly env: Readonly<Record<string, string>>;
  /** The staged key, for tests and the debug log; never written into the graph. */
  readonly stagedKeyFile: string | undefined;
  /** Removes the staged copy; safe to call more than once. */
  close(): Promise<void>;
}

export interface StageOptions {
  /** SPIRE is on for this target (model.spire): ssh, kubectl and the key are required. */
  readonly spire: SpireGraphCoordinates | undefined;
  /**
   * The key file (absolute). With SPIRE off it is staged when it is readable, because the
   * state may still hold a hand-off from a run with SPIRE on: removing it runs its destroy
   * step, which reaches the spire node with this key.
   */
  readonly keyFile: string | undefined;
  readonly env: Env;
}

export async function stageSpireAccess(opts: StageOptions): Promise<SpireRunAccess> {
  const tools: Record<string, string> = {};
  if (opts.spire !== undefined) {
    // for the hand-off's destroy step: a spire node made again has a new host key
    // (stacks/spire-scripts.ts, spireSshPrelude)
    tools.DEPLOY_SPIRE_NODE = opts.spire.node;
    tools.DEPLOY_SPIRE_HOST_KEY = opts.spire.hostKey;
    tools.DEPLOY_SSH = requireTool('ssh', opts.env).path;
    tools.DEPLOY_KUBECTL = requireTool('kubectl', opts.env).path;
  } else {
    const ssh = findTool('ssh', opts.env);
    if (ssh) tools.DEPLOY_SSH = ssh.path;
    const kubectl = findTool('kubectl', opts.env);
    if (kubectl) tools.DEPLOY_KUBECTL = kubectl.path;
  }
  if (opts.keyFile === undefined) return { env: tools, stagedKeyFile: undefined, close: async () => {} };

  let key: Buffer;
  try {
    key = await readFile(opts.keyFile);
  } catch (err) {
    if (opts.spire === undefined) return { env: tools, stagedKeyFile: undefined, close: async () => {} };
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError('the ssh key for the spire node cannot be read', [
      { where: 'SSH_PRIVATE_KEY_FILE', message: `${opts.keyFile} ${code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable (permission denied)' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? String(err)})`}` },
    ], { hint: 'point SSH_PRIVATE_KEY_FILE at the private key authorised for SSH_USER on the spire node' });
  }

  // mkdtemp makes the directory 0700; the key file itself is 0600 as ssh wants
  const dir = await mkdtemp(join(tmpdir(), 'deploy-spire-key-'));
  const removeNow = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeNow);
  const staged = join(dir, 'id');
  try {
    await writeFile(staged, key, { mode: 0o600, flag: 'wx' });
    await chmod(staged, 0o600);
  } catch (err) {
    process.removeListener('exit', removeNow);
    removeNow();
    throw err;
  }
  let closed = false;
  return {
    env: { ...tools, SSH_PRIVATE_KEY_FILE: staged },
    stagedKeyFile: staged,
    close: async () => {
      if (closed) return;
      closed = true;
      process.removeListener('exit', removeNow);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

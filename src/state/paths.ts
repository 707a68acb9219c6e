import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where `deploy` keeps per-user state:
 * `${DEPLOY_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}`.
 */
export function deployStateDir(env: NodeJS.ProcessEnv): string {
  if (env.DEPLOY_STATE_DIR) return env.DEPLOY_STATE_DIR;
  const xdg = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(xdg, 'k8s-deployer');
}

/** The embedded backend's data directory: `<deploy state dir>/state`. */
export function defaultStateDataDir(env: NodeJS.ProcessEnv): string {
  return join(deployStateDir(env), 'state');
}

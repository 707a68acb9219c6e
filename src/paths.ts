/** Where the program keeps things on the deployer, each overridable by one variable. */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Per-user state: graphs, the embedded state backend's data, run reports. */
export function stateDir(env: NodeJS.ProcessEnv): string {
  if (env.DEPLOY_STATE_DIR) return env.DEPLOY_STATE_DIR;
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state'), 'k8s-deployer');
}

/** Built programs (tofu, providers, cluster programs), keyed by name and version. */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  if (env.DEPLOY_CACHE_DIR) return env.DEPLOY_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'k8s-deployer');
}

/** Default directory for graph directories (`<dir>/<group>-<target>/cdk.tf.json`). */
export function defaultGraphsDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'graphs');
}

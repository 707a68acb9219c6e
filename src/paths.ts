/**
 * Where the program keeps things on the deployer, each overridable by one variable. The one
 * formula for TypeScript; toolchain/lib/paths.sh is the same for shell (a unit test compares them).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** Per-user state: graphs, the embedded state backend's data, run reports. */
export function stateDir(env: Env = process.env): string {
  if (env.DEPLOY_STATE_DIR) return env.DEPLOY_STATE_DIR;
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state'), 'k8s-deployer');
}

/** Built programs (tofu, providers, cluster programs), keyed by name and version; as in toolchain/lib/paths.sh. */
export function cacheDir(env: Env = process.env): string {
  if (env.DEPLOY_CACHE_DIR) return env.DEPLOY_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'k8s-deployer');
}

/** Default directory for graph directories (`<dir>/<group>-<target>/cdk.tf.json`). */
export function defaultGraphsDir(env: Env = process.env): string {
  return join(stateDir(env), 'graphs');
}

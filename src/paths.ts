/**
 * Where the program keeps things on the deployer, each overridable by one variable. The one
 * formula for TypeScript; toolchain/lib/paths.sh is the same for shell (a unit test compares them).
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

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

/** Where a run stands: its working directory (RunContext.cwd) and the environment that names the home directory. */
export interface PathPlace {
  readonly cwd: string;
  readonly env: Env;
}

/**
 * The one rule for a file the operator names (a flag, a variable, the group plan's path, a
 * kubeconfig path): `~` and `~/...` are the home directory ($HOME), then a relative path is the
 * run's working directory's (never process.cwd(): the caller's RunContext.cwd). Applied once,
 * where the run's inputs are read (config/coordinates.ts, config/load-targets.ts, the kubeconfig
 * of kube/kubeconfig-paths.ts): every later reader gets the absolute path, whatever its own cwd
 * (tofu and its provider run in the graph directory, the rollout step under tofu, ssh in the run
 * directory). Before it, a relative `--kubeconfig` passed deploy's checks and failed tofu's
 * provider ("no client config", issue 46). `~user` names another user's home: refused, as
 * go-homedir's Expand refuses it.
 */
export function absoluteFile(text: string, place: PathPlace): { ok: true; path: string } | { ok: false; problem: string } {
  if (text === '~' || text.startsWith('~/')) return { ok: true, path: join(place.env.HOME || homedir(), text.slice(1)) };
  if (text.startsWith('~')) return { ok: false, problem: `${text}: only ~ and ~/... name a home directory; write the path in full` };
  return { ok: true, path: isAbsolute(text) ? text : resolve(place.cwd, text) };
}

/**
 * Where the benchmark runs: the local cluster's coordinates (its cluster.env), the programs
 * from the build cache, a private state directory and a state backend of its own. The
 * cluster is shared with the tests: the benchmark only creates namespaces named `bench-*`
 * and deletes them at the end.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir as cacheDirOf, stateDir } from '../../src/paths.ts';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The program's own directories (src/paths.ts): the local cluster's cluster.env is under the state directory. */
export const defaultStateDir = stateDir();
export const cacheDir = cacheDirOf();

export function log(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

export function readExports(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m?.[1] && m[2] !== undefined) out[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  return out;
}

export interface ClusterEnv {
  KUBE_CONFIG_PATH: string;
  K8S_REGISTRY: string;
  K8S_REGISTRY_TLS_VERIFY: string;
}

const clusterEnvFile = () => join(defaultStateDir, 'cluster', 'cluster.env');

/**
 * A version of toolchain/versions.env, read by the program's own parser (src/tools/versions.ts,
 * from dist/: its imports are the compiled program's; `npm run bench:*` builds first).
 */
export async function pinnedVersion(key: string): Promise<string> {
  const versions = (await import(join(root, 'dist/src/tools/versions.js'))) as typeof import('../../src/tools/versions.ts');
  return versions.pinnedVersion(key);
}

export const kubectlBin = join(cacheDir, 'kubernetes', await pinnedVersion('KUBERNETES_VERSION'), 'kubectl');

function clusterAnswers(env: Record<string, string>): boolean {
  try {
    execFileSync(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', 'get', '--raw', '/readyz'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** The cluster's coordinates; brings the cluster up (never down) when it does not answer. */
export function ensureCluster(): ClusterEnv {
  let env = existsSync(clusterEnvFile()) ? readExports(clusterEnvFile()) : {};
  if (!existsSync(kubectlBin) || !clusterAnswers(env)) {
    log('the local cluster does not answer: npm run cluster:up');
    execFileSync('npm', ['run', '-s', 'cluster:up'], { cwd: root, stdio: ['ignore', 2, 2], timeout: 3_600_000 });
    env = readExports(clusterEnvFile());
  }
  for (const k of ['KUBE_CONFIG_PATH', 'K8S_REGISTRY'] as const) {
    if (!env[k]) throw new Error(`bench: ${clusterEnvFile()} has no ${k}`);
  }
  return { KUBE_CONFIG_PATH: env.KUBE_CONFIG_PATH!, K8S_REGISTRY: env.K8S_REGISTRY!, K8S_REGISTRY_TLS_VERIFY: env.K8S_REGISTRY_TLS_VERIFY ?? 'false' };
}

/**
 * kubectl's output, whole: a read of a 200-node group's Deployments is more than the 1 MiB that
 * execFileSync keeps by default (the run of 2026-12-07 lost Helm's P10 release to ENOBUFS).
 */
const KUBECTL_MAX_BUFFER = 512 * 1024 * 1024;

export function kubectl(cluster: ClusterEnv, args: string[], input?: string, timeoutMs = 180_000): string {
  return execFileSync(kubectlBin, ['--kubeconfig', cluster.KUBE_CONFIG_PATH, ...args], { input, encoding: 'utf8', timeout: timeoutMs, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: KUBECTL_MAX_BUFFER });
}

/** What a part of the bench that brings up a group of its own is given. */
export interface GroupBenchOptions {
  cluster: ClusterEnv;
  /** deploy's environment (the bench's state backend) */
  env: NodeJS.ProcessEnv;
  work: string;
  /** the group's namespace, deleted by the caller */
  namespace: string;
  nodes: number;
  runs: number;
}

/**
 * The cluster's floor for an apply of these Deployments (issue 32): `kubectl rollout restart` of
 * all at once, then `rollout status` of each until it is rolled out; milliseconds. A pod replaced
 * per Deployment, the image already on the host, no deployer. (A node's Deployment has the
 * node's name: src/config/names.ts.)
 */
export function rolloutRestartMs(cluster: ClusterEnv, namespace: string, deployments: readonly string[]): number {
  const t0 = performance.now();
  kubectl(cluster, ['-n', namespace, 'rollout', 'restart', ...deployments.map((d) => `deployment/${d}`)]);
  for (const d of deployments) kubectl(cluster, ['-n', namespace, 'rollout', 'status', `deployment/${d}`, '--timeout=300s']);
  return performance.now() - t0;
}

export interface NodeImage {
  archive: string;
  tag: string;
}

/** A node image from test/cluster/images/build.sh (cached by content: seconds when present). */
export function buildImage(variant: 'good' | 'broken', config?: string): NodeImage {
  const args = config ? [variant, '--config', config] : [variant];
  const out = execFileSync(join(root, 'test/cluster/images/build.sh'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 1_800_000 });
  const kv = Object.fromEntries(out.split('\n').map((l) => /^([A-Z_]+)=(.*)$/.exec(l)).filter((m) => m !== null).map((m) => [m[1], m[2]]));
  if (!kv.ARCHIVE || !kv.TAG) throw new Error(`build.sh ${args.join(' ')} printed no ARCHIVE/TAG`);
  return { archive: kv.ARCHIVE, tag: kv.TAG };
}

/** Helm 4.3.1 from toolchain/helm (built once into the cache). */
export function buildHelm(): string {
  const out = execFileSync('bash', [join(root, 'toolchain/helm/build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 1_800_000 });
  const m = /^HELM=(.+)$/m.exec(out);
  if (!m?.[1]) throw new Error('toolchain/helm/build.sh printed no HELM=');
  return m[1];
}

/**
 * deploy's environment for a bench of one namespace with the embedded state backend (its state
 * under `work`): only PATH and HOME of the caller's, the cluster's coordinates, quiet logs.
 */
export function embeddedEnv(cluster: ClusterEnv, namespace: string, work: string, rolloutTimeoutSeconds: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...cluster,
    K8S_NAMESPACE: namespace,
    DEPLOY_STATE_DIR: join(work, 'state'),
    DEPLOY_STATE: 'embedded',
    DEPLOY_LOG_LEVEL: 'warn',
    DEPLOY_ROLLOUT_TIMEOUT: `${rolloutTimeoutSeconds}s`,
  };
}

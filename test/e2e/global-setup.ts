/**
 * Global setup of the e2e project: the local cluster (test/cluster/cluster.sh).
 *
 * Builds the cluster programs when they are missing (toolchain/cluster/build.sh skips what
 * the cache has), brings the cluster up (idempotent: a running cluster is reused), reads
 * <state>/cluster/cluster.env into process.env (KUBE_CONFIG_PATH, K8S_REGISTRY,
 * K8S_REGISTRY_TLS_VERIFY) and provides it to the tests as `clusterEnv`. The cluster stays up
 * for the whole run; teardown runs `down` only when this setup started it (`down --keep-data`
 * when the cluster was down with its data kept: an operator's parked demo stays).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import type { TestProject } from 'vitest/node';
import { stateDir as deployStateDir } from '../../src/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    clusterEnv: Record<string, string>;
    /** When the e2e files start (ms since the epoch; deploy-setup.ts, the last global setup). */
    e2eFilesFrom: number;
  }
}

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const clusterScript = `${repoRoot}test/cluster/cluster.sh`;
const buildScript = `${repoRoot}toolchain/cluster/build.sh`;

/** `export KEY=VALUE` lines (cluster.env) to a record. */
export function parseExports(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}

/** The local cluster's state directory (test/cluster/lib/env.sh: $DEPLOY_STATE_DIR/cluster). */
export function stateDir(): string {
  return `${deployStateDir()}/cluster`;
}

/**
 * One e2e run at a time per cluster: the cluster test takes the cluster down and up again,
 * which would pull it away from another run's pods. flock(1) holds the lock for as long as
 * its stdin is open, so it is released when teardown closes it or this process dies.
 */
async function lockCluster(): Promise<{ holder: ResultPromise }> {
  const lockFile = `${stateDir()}.e2e.lock`;
  await mkdir(`${stateDir()}/..`, { recursive: true });
  const holder = execa('flock', ['-w', '3600', lockFile, '-c', 'echo locked; exec cat'], {
    stdin: 'pipe', stdout: 'pipe', stderr: 'inherit', reject: false,
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout?.on('data', (chunk: Buffer) => { if (chunk.toString().includes('locked')) resolve(); });
    void holder.then((r) => reject(new Error(`could not lock ${lockFile} within an hour (flock exit ${r.exitCode})`)));
  });
  // Wrapped: an async function returning the (thenable) process would wait for its end.
  return { holder };
}

export default async function setup(project: TestProject) {
  const { holder: lock } = await lockCluster();
  // A cold machine builds for ~15 min; a warm one skips in about a second.
  await execa('bash', [buildScript, 'all'], { stdout: 'inherit', stderr: 'inherit', timeout: 3_600_000 });
  const before = await execa('bash', [clusterScript, 'status'], { reject: false, timeout: 60_000 });
  const wasUp = before.exitCode === 0;
  // Down with its data kept (`cluster.sh down --keep-data`, e.g. an operator's demo parked):
  // `up` puts that data back, and teardown keeps it again, so the run leaves it as it found it.
  const hadKeptData = !wasUp && existsSync(`${stateDir()}.kept`);
  await execa('bash', [clusterScript, 'up'], { stdout: 'ignore', stderr: 'inherit', timeout: 300_000 });
  const env = parseExports(await readFile(`${stateDir()}/cluster.env`, 'utf8'));
  Object.assign(process.env, env);
  project.provide('clusterEnv', env);
  return async () => {
    if (!wasUp) {
      await execa('bash', [clusterScript, 'down', ...(hadKeptData ? ['--keep-data'] : [])], { stdout: 'ignore', stderr: 'inherit', timeout: 300_000, reject: false });
    }
    lock.stdin?.end();
    await lock;
  };
}

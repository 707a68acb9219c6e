/**
 * Helm 4 (toolchain/helm, bench-env.ts buildHelm) on bench/helm-chart: one release in a namespace
 * of the bench's, each command timed by the local clock. Helm runs at its own defaults (server-side
 * apply, client QPS and burst), as an operator would run it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { kubectl, root, type ClusterEnv } from './bench-env.ts';
import { writeProbeValues } from './probe-values.ts';

export const chartDir = join(root, 'bench/helm-chart');

/** Helm's environment: PATH alone, its home, cache, config and data under the bench's work directory. */
export function helmEnv(work: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: work, HELM_CACHE_HOME: join(work, 'helm-cache'), HELM_CONFIG_HOME: join(work, 'helm-config'), HELM_DATA_HOME: join(work, 'helm-data') };
}

/** A namespace of the bench's (`bench-*`, deleted by bench.ts at the end), with these labels. */
export function createNamespace(cluster: ClusterEnv, name: string, labels: Readonly<Record<string, string>> = {}): void {
  kubectl(cluster, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }));
}

export interface HelmReleaseOptions {
  helm: string;
  cluster: ClusterEnv;
  work: string;
  /** the release's name and namespace */
  name: string;
  namespace: string;
}

export class HelmRelease {
  private readonly o: HelmReleaseOptions;
  private readonly probes: string;

  // (no parameter properties: bench/ runs under node's type stripping, which refuses them)
  constructor(o: HelmReleaseOptions) {
    this.o = o;
    this.probes = writeProbeValues(o.work);
  }

  /**
   * `helm <verb> <name> bench/helm-chart -f <probe scripts> -f <values> <extra>`: milliseconds of
   * helm alone (the values file is written before the clock starts); fails with helm's last lines.
   */
  async run(verb: 'install' | 'upgrade', values: unknown, extra: readonly string[] = [], timeoutMs = 600_000): Promise<number> {
    const file = join(this.o.work, `helm-values-${this.o.name}.json`);
    writeFileSync(file, JSON.stringify(values));
    const args = [verb, this.o.name, chartDir, '--namespace', this.o.namespace, '--kubeconfig', this.o.cluster.KUBE_CONFIG_PATH, '-f', this.probes, '-f', file, ...extra];
    const t0 = performance.now();
    const r = await execa(this.o.helm, args, { env: helmEnv(this.o.work), extendEnv: false, reject: false, timeout: timeoutMs });
    const ms = performance.now() - t0;
    if (r.exitCode !== 0) throw new Error(`helm ${verb} ${extra.join(' ')} of ${this.o.name} in ${this.o.namespace} exited ${r.exitCode}: ${(r.stderr || r.stdout).split('\n').slice(-20).join('\n')}`);
    return ms;
  }
}

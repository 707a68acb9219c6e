/**
 * The Helm side of P2a, P2b and P10 (issue 48): a Helm 4 release of bench/helm-chart holding the
 * same nodes as deploy's group (the same names and first images, a claim, a service account and a
 * Deployment each with deploy's pod, probes and timings, the target's NetworkPolicy), its pods
 * running, in a namespace of its own with the Pod Security labels of deploy's. Then, as deploy's
 * apply does, k nodes given a new image: `helm upgrade --wait` (the watcher: every object of the
 * release ready), timed; and the cluster's floor on its Deployments (a restart there is no hand
 * edit on deploy's group, which would send deploy's next apply to a full plan).
 *
 * Not timed on Helm's side: the push of the new image (skopeo, as a Helm user's pipeline pushes
 * before it runs helm); it is recorded beside. deploy's apply pushes inside its own time.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { POD_SECURITY_LABELS } from '../../src/contract/pod-security.ts';
import { buildImage, kubectl, log, rolloutRestartMs, root, type ClusterEnv } from './bench-env.ts';
import { createNamespace, HelmRelease } from './helm-release.ts';
import { groupValues, nodesOfDeployments, withImage, type GroupSettings, type HelmNode } from './helm-values.ts';
import { pushImage } from './push.ts';
import { settleHost, type Settled } from './settle.ts';
import { secs } from './stats.ts';

/**
 * How deploy runs a group with this environment (DEPLOY_PROBE_PERIOD, DEPLOY_STOP_TIMEOUT, else
 * deploy's defaults), read by deploy's own parser and names from dist/ (`npm run bench:*` builds first).
 */
export async function deploySettings(group: string, env: NodeJS.ProcessEnv): Promise<GroupSettings> {
  const { DURATION_RULES, parseDuration } = (await import(join(root, 'dist/src/config/duration.js'))) as typeof import('../../src/config/duration.ts');
  const { names } = (await import(join(root, 'dist/src/config/names.js'))) as typeof import('../../src/config/names.ts');
  const seconds = (text: string, what: string) => {
    const d = parseDuration(text);
    if (d === undefined) throw new Error(`${what} ${JSON.stringify(text)} is no duration`);
    return d.seconds;
  };
  return {
    group,
    networkPolicyName: names.networkPolicy(),
    probePeriodSeconds: seconds(env.DEPLOY_PROBE_PERIOD ?? DURATION_RULES.probePeriod.defaultText, 'DEPLOY_PROBE_PERIOD'),
    stopTimeoutSeconds: seconds(env.DEPLOY_STOP_TIMEOUT ?? DURATION_RULES.stopTimeout.defaultText, 'DEPLOY_STOP_TIMEOUT'),
  };
}

/** deploy's group: its Deployments as Helm nodes (names, images pinned by digest, machine IDs). */
export function nodesOfGroup(cluster: ClusterEnv, namespace: string): HelmNode[] {
  return nodesOfDeployments(JSON.parse(kubectl(cluster, ['-n', namespace, 'get', 'deployments', '-o', 'json'])).items);
}

export interface HelmGroupOptions {
  helm: string;
  cluster: ClusterEnv;
  work: string;
  /** the release's namespace, its own */
  namespace: string;
  /** deploy's group: its namespace (the nodes and their first images) and its environment (the pod's timings) */
  from: string;
  /** the nodes as read from deploy's group before it went (scale.ts, when the node cannot hold both groups); absent: read from `from` */
  nodes?: readonly HelmNode[];
  env: NodeJS.ProcessEnv;
  group: string;
  /** nodes added per upgrade while the release comes up (deploy's group came up the same way) */
  batch: number;
  /** `helm upgrade --timeout` of a measured change, seconds */
  timeoutSeconds: number;
  /**
   * more flags for every helm command of the release, e.g. `--qps 50`: by default Helm runs at
   * its client's defaults (client-go's 5 requests a second past a burst of 100), and each upgrade
   * reads and applies every object of the release one by one (a GET and a server-side apply each,
   * pkg/kube/client.go), so a big release may wait on its own client (BENCH_HELM_FLAGS)
   */
  flags?: readonly string[];
}

/** One change by Helm: its `helm upgrade --wait` and the push before it (not part of the figure). */
export interface HelmChange {
  ms: number;
  pushMs: number;
}

export class HelmGroup {
  private readonly o: HelmGroupOptions;
  private readonly release: HelmRelease;
  private readonly settings: GroupSettings;
  private nodes: HelmNode[];
  /** the bring-up, every batch's upgrade summed */
  readonly upMs: number;

  private constructor(o: HelmGroupOptions, release: HelmRelease, settings: GroupSettings, nodes: HelmNode[], upMs: number) {
    this.o = o;
    this.release = release;
    this.settings = settings;
    this.nodes = nodes;
    this.upMs = upMs;
  }

  /**
   * The release, brought up `batch` nodes at a time (`helm upgrade --install --wait` each), with
   * the names and images of deploy's group and a machine ID of its own per node (two running
   * machines never share one).
   */
  static async bringUp(o: HelmGroupOptions): Promise<HelmGroup> {
    const settings = await deploySettings(o.group, o.env);
    const nodes = (o.nodes ?? nodesOfGroup(o.cluster, o.from)).map((n) => ({ ...n, machineId: randomUUID() }));
    createNamespace(o.cluster, o.namespace, POD_SECURITY_LABELS);
    const release = new HelmRelease({ helm: o.helm, cluster: o.cluster, work: o.work, name: 'group', namespace: o.namespace });
    log(`helm: bringing up a release of ${nodes.length} nodes in ${o.namespace}, ${o.batch} at a time`);
    let upMs = 0;
    for (let upTo = Math.min(o.batch, nodes.length); ; upTo = Math.min(upTo + o.batch, nodes.length)) {
      const values = groupValues(nodes.slice(0, upTo), settings);
      const up = () => release.run('upgrade', values, ['--install', '--wait', '--timeout', '30m', ...(o.flags ?? [])], 2_100_000);
      // as deploy's first apply: a batch that failed is run again, as an operator would
      const ms = await up().catch((err: unknown) => {
        log(`helm: the release up to ${upTo} nodes failed; running it again: ${String(err).split('\n')[0]}`);
        return up();
      });
      upMs += ms;
      log(`helm: the release up to ${upTo} nodes: ${secs(ms)} s`);
      if (upTo === nodes.length) break;
    }
    return new HelmGroup(o, release, settings, nodes, upMs);
  }

  get namespace(): string {
    return this.o.namespace;
  }

  /**
   * deploy's change made by Helm: a new image (test/cluster/images/build.sh with `config`, an
   * image of its own, so neither tool's pull rides on layers the other just brought to the host)
   * pushed to `<registry>/<namespace>/node` (not timed; the archive removed after), the nodes
   * `changed` given it by digest, `helm upgrade --wait` (timed); each changed Deployment must then
   * name the image and be rolled out and ready.
   */
  async change(changed: readonly string[], config: string): Promise<HelmChange> {
    const image = buildImage('good', config);
    const repo = `${this.o.cluster.K8S_REGISTRY}/${this.o.namespace}/node`;
    const p0 = performance.now();
    let ref: string;
    try {
      ref = `${repo}@${await pushImage(this.o.cluster, image.archive, `${repo}:${image.tag}`, this.o.work)}`;
    } finally {
      rmSync(image.archive, { force: true });
    }
    const pushMs = performance.now() - p0;
    this.nodes = withImage(this.nodes, changed, ref);
    // --timeout bounds helm's wait, not its applies before it (every object of the release, one by
    // one): the process gets as long as a deploy run does (lib/deploy-run.ts)
    const ms = await this.release.run('upgrade', groupValues(this.nodes, this.settings), ['--wait', '--timeout', `${this.o.timeoutSeconds}s`, ...(this.o.flags ?? [])], 1_800_000);
    const items = JSON.parse(kubectl(this.o.cluster, ['-n', this.o.namespace, 'get', 'deployments', '-o', 'json'])).items as any[];
    for (const name of changed) {
      const d = items.find((x) => x.metadata.name === name);
      const s = d?.status ?? {};
      const rolled = d?.spec.template.spec.containers[0].image === ref && (s.observedGeneration ?? 0) >= d.metadata.generation && s.updatedReplicas === 1 && s.readyReplicas === 1;
      if (!rolled) throw new Error(`helm upgrade --wait returned, but the Deployment ${name} in ${this.o.namespace} is not rolled out to ${ref}: ${JSON.stringify(s)}`);
    }
    log(`helm: upgrade --wait, ${changed.length} changed node(s): ${secs(ms)} s (the push before it: ${secs(pushMs)} s)`);
    return { ms, pushMs };
  }

  /** The cluster's floor on this release's Deployments (bench-env.ts rolloutRestartMs). */
  floor(names: readonly string[]): number {
    const ms = rolloutRestartMs(this.o.cluster, this.o.namespace, names);
    log(`helm: the cluster alone, ${names.length} of the release's Deployment(s) restarted and rolled out: ${secs(ms)} s`);
    return ms;
  }
}

/** Helm's side of a part: the release and how the host settled after it, or why it did not come up. */
export interface HelmSide {
  group?: HelmGroup;
  settled?: Settled;
  error?: string;
}

/**
 * The release brought up, then the host left to settle (at most `settleSeconds`) with both
 * groups up. A release that does not come up (the host cannot hold twice the pods, say) is said
 * and the part goes on without Helm: deploy's own figures are not lost with it.
 */
export async function bringUpHelmSide(o: HelmGroupOptions, settleSeconds: number): Promise<HelmSide> {
  try {
    const group = await HelmGroup.bringUp(o);
    return { group, settled: await settleHost(settleSeconds, (msg) => log(`helm: ${msg}`)) };
  } catch (err) {
    const error = `Helm's release of ${o.namespace} did not come up: ${err instanceof Error ? err.message : String(err)}`;
    log(error);
    return { error };
  }
}

/**
 * P10 (issue 32): the same kind of group at 4x the scale (BENCH_SCALE_NODES, 200), in a
 * namespace and state key of its own, after the 50-node part is gone (two groups' probes at
 * once would measure the host, not deploy):
 *   - the verified no-op plan of the whole group (goal <= 1.5 s);
 *   - the full plan (DEPLOY_FAST_PLAN=off) against a bare `tofu plan` of the same graph and
 *     state on the stock provider (reported, no goal);
 *   - P2a at this size (issue 48), once a Helm 4 release of the same nodes is up beside the group
 *     (bench/lib/helm-group.ts; `helmGroupNamespace`, brought up in waves as the group was) and
 *     the host has settled: each run, the order rotating, `deploy apply` of node 1 given a new
 *     image (with its timeline, apply-timeline.ts), `helm upgrade --wait` of the release with
 *     its node 1 given a new image (goal: deploy <= 1.0x Helm), and the floor (`kubectl rollout
 *     restart` + `rollout status` of the release's node 1); deploy's apply here against its own
 *     at 50 nodes in the same run (goal <= 2x: the cost of one change must not grow much with
 *     the group). Without the release: deploy's applies alone;
 *   - the host's memory (MemAvailable) before the group, with it, and with Helm's release (too, or in its place),
 *     and the load.
 * The group comes up in waves (`--max-unavailable`): 200 first boots at once starve 2 cores.
 * Then one full apply without waves (not measured) leaves the state as the measured applies,
 * which run without waves, write it (the wave order is in the state's dependencies until then).
 * Its probes run every BENCH_SCALE_PROBE_PERIOD (--probe-period, default here 60s; liveness 3x):
 * at deploy's default 10s, 200 pods are 27 runc execs a second, which held this host at load
 * 277 with 110 pods up (2026-12-03); at 60s they are 4.4 a second, less than the 50-node part's
 * 6.7 at the default, so P10 compares one change in two groups that load the host alike.
 * Helm's release runs the same pods (the same probe period): with it the host carries twice
 * the pods (400 at 200 nodes, about 8.9 execs a second at 60s), both tools measured under it.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { buildImage, kubectl, log, type GroupBenchOptions, type NodeImage } from './lib/bench-env.ts';
import { phases, renderTimeline, timeDeploy } from './lib/apply-timeline.ts';
import { countApply, runDeploy, writePlan } from './lib/deploy-run.ts';
import { bringUpHelmSide, nodesOfGroup, type HelmGroup, type HelmSide } from './lib/helm-group.ts';
import type { HelmNode } from './lib/helm-values.ts';
import type { Settled } from './lib/settle.ts';
import type { HelmRuns } from './lib/side-by-side.ts';
import { bareGraph, bareTofuPlanMs, STOCK } from './noop-plan.ts';
import { medianRun, rotated, secs, spread, type Spread } from './lib/stats.ts';

export interface ScaleOptions extends GroupBenchOptions {
  /** how many nodes the first apply brings up at once (--max-unavailable) */
  wave: number;
  /** --probe-period of the group (a duration, e.g. 60s) */
  probePeriod: string;
  /** Helm 4, and the namespace of its release of the same nodes; absent: no Helm side */
  helm: string;
  helmGroupNamespace?: string;
  /** `helm upgrade --timeout` of a measured change, seconds */
  helmTimeoutSeconds: number;
  /** more flags for every helm command of the release (bench/lib/helm-group.ts), e.g. --qps */
  helmFlags: string[];
  /** the longest wait for the host to settle once both groups are up, seconds (bench/lib/settle.ts) */
  settleSeconds: number;
}

export interface ScaleResults {
  nodes: number;
  probePeriod: string;
  firstApplyMs: number;
  /** MiB available before the group, with it and with Helm's release (beside it, or in its place: `helm.after`), and the 1-minute load with the group */
  memory: { beforeMiB: number; withGroupMiB: number; load1: number; withHelmMiB?: number };
  noopPlan: { ms: Spread; runs: number[] };
  oneNode: { ms: Spread; runs: number[]; scoped: number; timeline: string; phases: ReturnType<typeof phases> };
  fullPlan: { deploy: Spread; tofu: Spread; deployRuns: number[]; tofuRuns: number[] };
  /** issue 48: the same 1-node change by `helm upgrade --wait` of a release of the same nodes, and the floor on it; absent before issue 48 and without the release */
  helm?: { namespace: string; upMs: number; settled?: Settled; oneNode: HelmRuns; flags?: string[]; after?: string };
  floor?: { ms: Spread; runs: number[] };
  /** why Helm's release did not come up */
  helmError?: string;
}

const GROUP = 'bench200';
const nodeName = (i: number) => `m${String(i + 1).padStart(3, '0')}`;

function memAvailableMiB(): number {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

export async function benchScale(opts: ScaleOptions): Promise<ScaleResults> {
  const env: NodeJS.ProcessEnv = { ...opts.env, K8S_NAMESPACE: opts.namespace, DEPLOY_PROBE_PERIOD: opts.probePeriod };
  const beforeMiB = memAvailableMiB();
  const base = buildImage('good');
  const images: Record<string, NodeImage> = {};
  for (let i = 0; i < opts.nodes; i++) images[nodeName(i)] = base;
  const plan = () => writePlan(opts.work, `scale-${Date.now()}`, GROUP, images);

  log(`scale: first apply of ${opts.nodes} nodes into ${opts.namespace}, waves of ${opts.wave}, probe period ${opts.probePeriod}`);
  const firstPlan = plan();
  const waves = { ...env, DEPLOY_MAX_UNAVAILABLE: String(opts.wave) };
  let first = await runDeploy(['apply', '--plan', firstPlan, '--json'], waves, 7_200_000);
  if (first.exitCode !== 0) {
    // as bench/fleet.ts: a first apply that failed is applied again, as an operator would
    log(`scale: the first apply exited ${first.exitCode}; applying again: ${(first.stdout || first.stderr).split('\n').find((l) => /FAILED|failed/.test(l)) ?? ''}`);
    const again = await runDeploy(['apply', '--plan', firstPlan, '--json'], waves, 7_200_000);
    if (again.exitCode !== 0) {
      // whether the host could hold the group: what it had left when the apply gave up
      const load = loadavg().map((l) => l.toFixed(1)).join(', ');
      throw new Error(`the first apply of ${opts.nodes} nodes exited ${first.exitCode}, then ${again.exitCode} when applied again (MemAvailable ${beforeMiB} MiB before the group, ${memAvailableMiB()} MiB now; load ${load}): ${again.stderr.split('\n').slice(-15).join('\n')}`);
    }
    first = { ...again, ms: first.ms + again.ms };
  }
  log(`scale: first apply ${secs(first.ms)} s`);
  const memory: ScaleResults['memory'] = { beforeMiB, withGroupMiB: memAvailableMiB(), load1: loadavg()[0]! };
  log(`scale: MemAvailable ${memory.beforeMiB} MiB before the group, ${memory.withGroupMiB} MiB with it; load ${memory.load1.toFixed(1)}`);

  // The group as the measured applies leave it: they run without waves, and the graph of a wave
  // apply orders each wave after the one before, which tofu keeps in every resource's
  // dependencies (transitively: a state growing with the square of the group, bench/README.md).
  // A scoped apply rewrites only the resources it changes, so without this the measured applies
  // would decode the bring-up's order for ever; one full apply (a refresh: tofu writes each
  // resource's dependencies anew) of node 1 with a new image, not measured.
  {
    images[nodeName(0)] = buildImage('good', `BENCH_SCALE=${opts.namespace}-warm`);
    const warm = await runDeploy(['apply', '--plan', plan(), '--json'], { ...env, DEPLOY_FAST_PLAN: 'off' });
    if (warm.exitCode !== 0) throw new Error(`the full apply of 1 changed node of ${opts.nodes} (warm-up) exited ${warm.exitCode}: ${warm.stderr.split('\n').slice(-10).join('\n')}`);
    log(`scale: a full apply without waves (warm-up, not measured): ${secs(warm.ms)} s`);
  }

  // the verified no-op plan of the whole group (a warm-up first: the first plan after an apply records),
  // of the group as it is now (node 1 has the warm-up's image)
  const noopRuns: number[] = [];
  const asNow = plan();
  for (let run = 0; run <= opts.runs; run++) {
    const r = await runDeploy(['plan', '--plan', asNow, '--json'], env);
    if (r.exitCode !== 0) throw new Error(`deploy plan of ${opts.nodes} nodes exited ${r.exitCode}: ${r.stderr.split('\n').slice(-10).join('\n')}`);
    const verified = r.json?.targets?.every((t: any) => t.verifiedNoop === true) === true;
    if (run > 0 && !verified) throw new Error(`the no-op plan of ${opts.nodes} nodes was not verified by the check: ${r.stderr.split('\n').filter((l) => /full plan/.test(l)).join(' / ')}`);
    if (run > 0) noopRuns.push(r.ms);
    log(`scale: no-op plan ${secs(r.ms)} s${run === 0 ? ' (warm-up)' : verified ? ' (verified)' : ''}`);
  }

  // the full plan against bare tofu on the same graph and state (stock provider, as P1), before
  // Helm's release comes up: measured on deploy's group alone, as before issue 48
  const graphDir = join(env.DEPLOY_STATE_DIR!, 'graphs', `${GROUP}-all`);
  const bare = { env, work: opts.work, graphDir, stateAddress: `${env.TF_HTTP_ADDRESS}/${GROUP}-all` };
  const stockDir = await bareGraph(bare, 'scale-graph-stock', STOCK);
  const deployRuns: number[] = [];
  const tofuRuns: number[] = [];
  const now = plan();
  for (let run = 1; run <= opts.runs; run++) {
    const d = await runDeploy(['plan', '--plan', now, '--json'], { ...env, DEPLOY_FAST_PLAN: 'off' });
    if (d.exitCode !== 0) throw new Error(`deploy plan (DEPLOY_FAST_PLAN=off) of ${opts.nodes} nodes exited ${d.exitCode}: ${d.stderr.split('\n').slice(-10).join('\n')}`);
    deployRuns.push(d.ms);
    tofuRuns.push(await bareTofuPlanMs(bare, stockDir, STOCK, [], 1_800_000));
    log(`scale: full plan ${secs(d.ms)} s, bare tofu plan ${secs(tofuRuns.at(-1)!)} s`);
  }

  // P10 against Helm (issue 48): a Helm release of the same nodes, brought up in waves as
  // deploy's group was, the host settled; then each run, the order rotating: deploy's apply of
  // node 1 given a new image (with its timeline), the same by `helm upgrade --wait`, the floor on
  // the release's node 1. Without the release, deploy's applies alone (as before issue 48).
  // The node holds `maxPods` pods (250 on the local cluster: its pod range is a /24): when it
  // cannot hold both groups (400 pods at 200 nodes), deploy's runs come first on its group
  // alone, then the group goes and Helm's release comes up in its place, and Helm's runs and
  // the floor are made on it: each tool under its own group's load, one after the other (the
  // run of 2026-12-07 03:07 waited with 50 of the release's pods Pending, "Too many pods").
  const wantsHelm = opts.helmGroupNamespace !== undefined && opts.runs > 0;
  const after = wantsHelm ? helmAfterDeploy(opts.cluster, opts.nodes) : undefined;
  // the release brought up (with the nodes read before deploy's group went, when it comes after)
  const helmUp = async (nodes?: HelmNode[]): Promise<HelmSide> => {
    const up = await bringUpHelmSide({ helm: opts.helm, cluster: opts.cluster, work: opts.work, namespace: opts.helmGroupNamespace!, from: opts.namespace, ...(nodes ? { nodes } : {}), env, group: GROUP, batch: opts.wave, timeoutSeconds: opts.helmTimeoutSeconds, flags: opts.helmFlags }, opts.settleSeconds);
    if (up.group) {
      memory.withHelmMiB = memAvailableMiB();
      log(`scale: MemAvailable ${memory.withHelmMiB} MiB with Helm's release${after ? ' in place of the group' : ' too'}; load ${loadavg()[0]!.toFixed(1)}`);
    }
    return up;
  };
  let side: HelmSide = wantsHelm && after === undefined ? await helmUp() : {};
  const oneRuns: number[] = [];
  let scoped = 0;
  const timelines: { ms: number; timeline: string; phases: ReturnType<typeof phases> }[] = [];
  const helmRuns: Omit<HelmRuns, 'size' | 'ms'> = { runs: [], pushMs: [] };
  const floorRuns: number[] = [];
  const deployApply = async (run: number) => {
    const image = buildImage('good', `BENCH_SCALE=${opts.namespace}-${run}`);
    images[nodeName(0)] = image;
    const t = await timeDeploy(['apply', '--plan', plan(), '--json'], env);
    if (t.exitCode !== 0) throw new Error(`the apply of 1 changed node of ${opts.nodes} exited ${t.exitCode}: ${t.lines.slice(-10).map((l) => l.text).join('\n')}`);
    const c = countApply(JSON.parse(t.stdout));
    if (c.pushes !== 1 || c.rollouts !== 1 || c.outcomes[0] !== 'ready') throw new Error(`the apply of 1 changed node of ${opts.nodes}: ${c.pushes} pushes, ${c.rollouts} rollouts (${c.outcomes.join(',')})`);
    if (t.lines.some((l) => /planned alone/.test(l.text))) scoped++;
    oneRuns.push(t.ms);
    timelines.push({ ms: t.ms, timeline: renderTimeline(t), phases: phases(t) });
    log(`scale: 1 changed node of ${opts.nodes}: ${secs(t.ms)} s`);
  };
  const helmUpgrade = (group: HelmGroup) => async (run: number) => {
    const c = await group.change([nodeName(0)], `BENCH_SCALE=${opts.namespace}-${run}-helm`);
    helmRuns.runs.push(c.ms);
    helmRuns.pushMs.push(c.pushMs);
  };
  const floor = (group: HelmGroup) => async () => {
    floorRuns.push(group.floor([nodeName(0)]));
  };
  if (after !== undefined) {
    log(`scale: ${after}: deploy's runs first, then Helm's release in its place`);
    for (let run = 1; run <= opts.runs; run++) await deployApply(run);
    const nodes = nodesOfGroup(opts.cluster, opts.namespace);
    log(`scale: deleting ${opts.namespace} (deploy's group) for Helm's release`);
    kubectl(opts.cluster, ['delete', 'namespace', opts.namespace, '--wait=true', '--timeout=15m'], undefined, 960_000);
    side = await helmUp(nodes);
  }
  // each run, the order rotating: deploy's apply (unless it ran above), Helm's upgrade, the floor
  const release = side.group;
  const sides = [...(after === undefined ? [deployApply] : []), ...(release ? [helmUpgrade(release), floor(release)] : [])];
  for (let run = 1; run <= opts.runs && sides.length > 0; run++) {
    for (const measure of rotated(sides, run - 1)) await measure(run);
  }
  const median = medianRun(timelines);
  return {
    nodes: opts.nodes,
    probePeriod: opts.probePeriod,
    firstApplyMs: first.ms,
    memory,
    noopPlan: { ms: spread(noopRuns), runs: noopRuns },
    oneNode: { ms: spread(oneRuns), runs: oneRuns, scoped, timeline: median.timeline, phases: median.phases },
    fullPlan: { deploy: spread(deployRuns), tofu: spread(tofuRuns), deployRuns, tofuRuns },
    ...(release ? { helm: { namespace: release.namespace, upMs: release.upMs, settled: side.settled, flags: opts.helmFlags, oneNode: { size: 1, ms: spread(helmRuns.runs), ...helmRuns }, ...(after ? { after } : {}) }, floor: { ms: spread(floorRuns), runs: floorRuns } } : {}),
    ...(side.error ? { helmError: side.error } : {}),
  };
}

/**
 * Why Helm's release comes up after deploy's group is gone, or undefined when the node holds
 * both: the pods it may run (allocatable) against the pods it runs now and another group's.
 */
function helmAfterDeploy(cluster: ScaleOptions['cluster'], nodes: number): string | undefined {
  const node = JSON.parse(kubectl(cluster, ['get', 'nodes', '-o', 'json'])).items[0];
  const allocatable = Number(node?.status?.allocatable?.pods ?? 0);
  const running = (JSON.parse(kubectl(cluster, ['get', 'pods', '-A', '-o', 'json'])).items as { status?: { phase?: string } }[]).filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
  return running + nodes > allocatable ? `the node holds ${allocatable} pods, ${running} run now, Helm's release would add ${nodes}` : undefined;
}

/**
 * P4 (no-op apply), P1 and P6 (no-op plan vs bare tofu and Helm: noop-plan.ts) and P2 (scale-out) on one synthesized group
 * of 50 nodes in a namespace of its own, against a state backend of the benchmark's own
 * (`deploy state serve`), so that `deploy plan` and a bare `tofu plan` read the same state.
 *
 * P2a and P2b (issue 48): once P1, P4 and P6 are measured, a Helm 4 release of the same nodes
 * comes up beside the group (bench/lib/helm-group.ts; `helmGroupNamespace`), the host settles,
 * and each change of 1 and of 10 nodes is made three ways in one round, the order rotating by
 * run: `deploy apply` of the group, `helm upgrade --wait` of the release with the same nodes
 * given a new image, and the cluster's floor (`kubectl rollout restart` + `rollout status` of
 * the release's same Deployments). Without the release the floor runs on deploy's Deployments
 * after all its applies, as before.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildImage, kubectl, log, rolloutRestartMs, type GroupBenchOptions, type NodeImage } from './lib/bench-env.ts';
import { countApply, runDeploy, writePlan } from './lib/deploy-run.ts';
import { bringUpHelmSide, type HelmGroup, type HelmSide } from './lib/helm-group.ts';
import type { Settled } from './lib/settle.ts';
import type { HelmRuns } from './lib/side-by-side.ts';
import { rotated, secs, shuffled, spread, type Spread } from './lib/stats.ts';
import { benchNoopPlan, type NoopPlanResults } from './noop-plan.ts';

export interface FleetOptions extends GroupBenchOptions {
  sizes: number[];
  /** nodes added per apply while the group is first brought up */
  batch: number;
  /** Helm (P6) and the namespace of its release */
  helm: string;
  helmNamespace: string;
  /** the -parallelism levels of the bare tofu plan */
  parallelism: number[];
  /** the namespace of Helm's release of the same nodes for P2a and P2b; absent: no Helm side */
  helmGroupNamespace?: string;
  /** `helm upgrade --timeout` of a measured change, seconds */
  helmTimeoutSeconds: number;
  /** more flags for every helm command of the release (bench/lib/helm-group.ts), e.g. --qps */
  helmFlags: string[];
  /** the longest wait for the host to settle once both groups are up, seconds (bench/lib/settle.ts) */
  settleSeconds: number;
}

export interface FleetResults {
  initialApplyMs: number;
  noopApply: { pushes: number; rollouts: number; podRestarts: number; podsReplaced: number; ms: number };
  /** P1: `deploy plan` (patched provider) / bare `tofu plan` (stock provider) */
  plan: { deploy: Spread; tofu: Spread; ratio: number; deployRuns: number[]; tofuRuns: number[] };
  /** every variant of the no-op plan, P6, and the profiles (bench/noop-plan.ts); absent in results before issue 22 */
  noop?: NoopPlanResults;
  /** scoped: how many of the runs were planned alone (the changed nodes only: src/workflow/noop/verdict.ts) */
  scale: { size: number; ms: Spread; runs: number[]; scoped?: number }[];
  scaleRatio: number;
  /**
   * The cluster's own part of P2: `kubectl rollout restart` of the same 1 and 10 Deployments
   * and the wait until each is rolled out, without deploy (no plan, no push, the same image).
   * What no deployer can go below on this host; absent in results before 2026-12-02.
   */
  clusterFloor?: { size: number; ms: Spread; runs: number[] }[];
  /** whose Deployments the floor restarted: Helm's release's, interleaved with the applies (issue 48), or deploy's, after them */
  clusterFloorOn?: 'helm' | 'deploy';
  /**
   * P2a and P2b's base (issue 48): `helm upgrade --wait` of a release of the same nodes giving
   * the same nodes a new image, interleaved with deploy's applies; the time to bring it up, and
   * how the host settled after. Absent in results before issue 48 and without the release.
   */
  helm?: { namespace: string; upMs: number; settled?: Settled; sizes: HelmRuns[]; flags?: string[] };
  /** why Helm's release did not come up (P2a and P2b then have no Helm side) */
  helmError?: string;
  /** set when P2 comes from an earlier run (BENCH_SIZES=none): its group size and date */
  scaleFrom?: { nodes: number; date: string };
}

const GROUP = 'bench';
const nodeName = (i: number) => `n${String(i).padStart(2, '0')}`;

function podsOf(opts: FleetOptions): Map<string, number> {
  const pods = JSON.parse(kubectl(opts.cluster, ['-n', opts.namespace, 'get', 'pods', '-o', 'json'])).items as any[];
  return new Map(pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => [p.metadata.uid, (p.status.containerStatuses ?? []).reduce((a: number, c: any) => a + (c.restartCount ?? 0), 0)]));
}

function expectOk(what: string, r: { exitCode: number; stderr: string; stdout: string }): void {
  if (r.exitCode !== 0) throw new Error(`${what} exited ${r.exitCode}: ${(r.stderr || r.stdout).split('\n').slice(-20).join('\n')}`);
}

export async function benchFleet(opts: FleetOptions): Promise<FleetResults> {
  const env = { ...opts.env, K8S_NAMESPACE: opts.namespace };
  const base = buildImage('good');
  const images: Record<string, NodeImage> = {};
  for (let i = 0; i < opts.nodes; i++) images[nodeName(i)] = base;
  let plan = writePlan(opts.work, 'fleet-0', GROUP, images);

  // The first apply grows the group by `batch` nodes at a time: on 2 cores, 50 systemd pods
  // booting at once starve each other past the startup probe's deadline (measured: after
  // 8 min 34 of 50 still `initializing`, killed by the probe).
  log(`fleet: first apply of ${opts.nodes} nodes into ${opts.namespace}, ${opts.batch} at a time`);
  let firstMs = 0;
  for (let upTo = Math.min(opts.batch, opts.nodes); ; upTo = Math.min(upTo + opts.batch, opts.nodes)) {
    const part = writePlan(opts.work, `fleet-0-${upTo}`, GROUP, Object.fromEntries(Object.entries(images).slice(0, upTo)));
    let r = await runDeploy(['apply', '--plan', part, '--json'], env);
    if (r.exitCode !== 0) {
      // Seen: a fresh claim still Pending while the provisioner works is taken as
      // "unschedulable" by the rollout step (a first deploy: exit 5). Not measured here, so
      // do what an operator does: apply again (the failed step is tainted and retried).
      log(`fleet: first apply up to ${upTo} nodes exited ${r.exitCode}; applying again: ${(r.stdout || r.stderr).split('\n').find((l) => /FAILED/.test(l)) ?? ''}`);
      r = await runDeploy(['apply', '--plan', part, '--json'], env);
    }
    expectOk(`the first apply (${upTo} nodes)`, r);
    firstMs += r.ms;
    log(`fleet: first apply up to ${upTo} nodes: ${(r.ms / 1000).toFixed(1)} s`);
    if (upTo === opts.nodes) break;
  }
  const first = { ms: firstMs };

  // P4: a second apply of the same plan changes nothing: no push, no rollout, no pod replaced.
  const before = podsOf(opts);
  const again = await runDeploy(['apply', '--plan', plan, '--json'], env);
  expectOk('the no-op apply', again);
  const after = podsOf(opts);
  const counted = countApply(again.json);
  let podRestarts = 0;
  let podsReplaced = 0;
  for (const [uid, restarts] of after) {
    if (!before.has(uid)) podsReplaced++;
    else podRestarts += restarts - before.get(uid)!;
  }
  const noopApply = { pushes: counted.pushes, rollouts: counted.rollouts, podRestarts, podsReplaced, ms: again.ms };
  log(`fleet: no-op apply ${JSON.stringify(noopApply)}`);

  // P1 and P6: the no-op plan against bare tofu (stock provider) and Helm, with the levers
  // (patched vs stock provider, -parallelism) and a profile: bench/noop-plan.ts.
  const noop = await benchNoopPlan({
    cluster: opts.cluster,
    env,
    work: opts.work,
    plan,
    graphDir: join(opts.env.DEPLOY_STATE_DIR!, 'graphs', `${GROUP}-all`),
    stateAddress: `${opts.env.TF_HTTP_ADDRESS}/${GROUP}-all`,
    namespace: opts.namespace,
    helmNamespace: opts.helmNamespace,
    helm: opts.helm,
    runs: opts.runs,
    parallelism: opts.parallelism,
  });
  const deploySpread = noop.variants.deploy!.ms;
  const tofuSpread = noop.variants['tofu-stock']!.ms;
  const deployRuns = noop.variants.deploy!.runs;
  const tofuRuns = noop.variants['tofu-stock']!.runs;

  // P2: apply of k changed nodes; every size in every run, in a shuffled order; disjoint node
  // sets per size. Each apply brings a new release: an image built for this bench run, run and
  // size, that the registry has never seen, so each size pays one real upload (nodes sharing
  // an archive push it once; the others mount its layers) and none rides on another's push.
  // The archives are removed at the end (150 MB each).
  const offsets = new Map<number, number>();
  let next = 0;
  for (const k of opts.sizes) {
    offsets.set(k, next);
    next += k;
  }
  if (next > opts.nodes) throw new Error(`the sizes ${opts.sizes.join(',')} need ${next} nodes, the group has ${opts.nodes}`);
  const changedNodes = (k: number) => Array.from({ length: k }, (_, i) => nodeName(offsets.get(k)! + i));
  const scaleRuns = new Map<number, number[]>(opts.sizes.map((k) => [k, []]));
  const built: string[] = [];
  const scoped = new Map<number, number>();
  // P2a and P2b (issue 48): the same change by Helm, and the floor, beside deploy's apply of 1 and
  // of 10 nodes. Helm's release of the same nodes comes up now, after P1, P4 and P6 (measured on
  // deploy's group alone), and both groups' pods load the host alike for both tools.
  const goalSizes = [1, 10].filter((k) => offsets.has(k));
  const floorRuns = new Map<number, number[]>(goalSizes.map((k) => [k, []]));
  const helmRuns = new Map<number, { runs: number[]; pushMs: number[] }>(goalSizes.map((k) => [k, { runs: [], pushMs: [] }]));
  const side: HelmSide = opts.helmGroupNamespace && goalSizes.length && opts.runs > 0
    ? await bringUpHelmSide({ helm: opts.helm, cluster: opts.cluster, work: opts.work, namespace: opts.helmGroupNamespace, from: opts.namespace, env, group: GROUP, batch: opts.batch, timeoutSeconds: opts.helmTimeoutSeconds, flags: opts.helmFlags }, opts.settleSeconds)
    : {};
  const helmGroup = side.group;
  const deployApply = async (run: number, k: number) => {
    const image = buildImage('good', `BENCH_SCALE=${opts.namespace}-run-${run}-size-${k}`);
    built.push(image.archive);
    for (const n of changedNodes(k)) images[n] = image;
    plan = writePlan(opts.work, `fleet-${run}-${k}`, GROUP, images);
    const r = await runDeploy(['apply', '--plan', plan, '--json'], env);
    expectOk(`the apply of ${k} changed nodes`, r);
    const c = countApply(r.json);
    if (c.pushes !== k || c.rollouts !== k || c.outcomes.some((o) => o !== 'ready')) throw new Error(`apply of ${k} changed nodes: ${c.pushes} pushes, ${c.rollouts} rollouts (${c.outcomes.join(',')})`);
    scaleRuns.get(k)!.push(r.ms);
    // planned alone (the verified check scoped the plan to the changed nodes), or the full plan and why
    const how = r.stderr.split('\n').find((l) => /planned alone|full plan:/.test(l)) ?? '';
    if (/planned alone/.test(how)) scoped.set(k, (scoped.get(k) ?? 0) + 1);
    log(`fleet: ${k} changed node(s): ${secs(r.ms)} s (${/planned alone/.test(how) ? 'scoped plan' : how.replace(/^.*full plan: /, 'full plan: ') || 'full plan'})`);
  };
  const helmUpgrade = (group: HelmGroup) => async (run: number, k: number) => {
    const c = await group.change(changedNodes(k), `BENCH_SCALE=${opts.namespace}-run-${run}-size-${k}-helm`);
    helmRuns.get(k)!.runs.push(c.ms);
    helmRuns.get(k)!.pushMs.push(c.pushMs);
  };
  const floor = (group?: HelmGroup) => async (_run: number, k: number) => {
    const ms = group ? group.floor(changedNodes(k)) : rolloutRestartMs(opts.cluster, opts.namespace, changedNodes(k));
    floorRuns.get(k)!.push(ms);
    if (!group) log(`fleet: the cluster alone, ${k} Deployment(s) restarted and rolled out: ${secs(ms)} s`);
  };
  try {
    for (let run = 1; run <= (opts.sizes.length ? opts.runs : 0); run++) {
      const order = shuffled(opts.sizes, run * 7919);
      log(`fleet: scale-out run ${run}/${opts.runs}, order ${order.join(',')}`);
      for (const k of order) {
        const sides = helmGroup && goalSizes.includes(k) ? [deployApply, helmUpgrade(helmGroup), floor(helmGroup)] : [deployApply];
        for (const measure of rotated(sides, run - 1)) await measure(run, k);
      }
    }
    // Without Helm's release, the floor runs on deploy's own Deployments after all its applies
    // (a restart is a hand edit, which would send the next apply to tofu's refresh).
    for (let run = 1; run <= (helmGroup ? 0 : opts.runs); run++) for (const k of goalSizes) await floor()(run, k);
  } finally {
    for (const a of built) rmSync(a, { force: true });
  }
  const scale = opts.sizes.map((size) => ({ size, ms: spread(scaleRuns.get(size)!), runs: scaleRuns.get(size)!, scoped: scoped.get(size) ?? 0 }));
  const clusterFloor = goalSizes.map((size) => ({ size, ms: spread(floorRuns.get(size)!), runs: floorRuns.get(size)! }));
  const helm = helmGroup && { namespace: helmGroup.namespace, upMs: helmGroup.upMs, settled: side.settled, flags: opts.helmFlags, sizes: goalSizes.map((size): HelmRuns => ({ size, ms: spread(helmRuns.get(size)!.runs), ...helmRuns.get(size)! })) };
  const m = (k: number) => scale.find((s) => s.size === k)?.ms.median ?? Number.NaN;
  return {
    initialApplyMs: first.ms,
    noopApply,
    plan: { deploy: deploySpread, tofu: tofuSpread, ratio: deploySpread.median / tofuSpread.median, deployRuns, tofuRuns },
    noop,
    scale,
    scaleRatio: m(10) / m(1),
    clusterFloor,
    clusterFloorOn: helmGroup ? 'helm' : 'deploy',
    ...(helm ? { helm } : {}),
    ...(side.error ? { helmError: side.error } : {}),
  };
}

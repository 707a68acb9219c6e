/**
 * P4 (no-op apply), P1 and P6 (no-op plan vs bare tofu and Helm: noop-plan.ts) and P2 (scale-out) on one synthesized group
 * of 50 nodes in a namespace of its own, against a state backend of the benchmark's own
 * (`deploy state serve`), so that `deploy plan` and a bare `tofu plan` read the same state.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildImage, kubectl, log, rolloutRestartMs, type ClusterEnv, type GroupBenchOptions, type NodeImage } from './lib/bench-env.ts';
import { countApply, runDeploy, writePlan } from './lib/deploy-run.ts';
import { shuffled, spread, type Spread } from './lib/stats.ts';
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
  const scaleRuns = new Map<number, number[]>(opts.sizes.map((k) => [k, []]));
  const built: string[] = [];
  const scoped = new Map<number, number>();
  try {
    for (let run = 1; run <= (opts.sizes.length ? opts.runs : 0); run++) {
      const order = shuffled(opts.sizes, run * 7919);
      log(`fleet: scale-out run ${run}/${opts.runs}, order ${order.join(',')}`);
      for (const k of order) {
        const image = buildImage('good', `BENCH_SCALE=${opts.namespace}-run-${run}-size-${k}`);
        built.push(image.archive);
        const start = offsets.get(k)!;
        for (let i = start; i < start + k; i++) images[nodeName(i)] = image;
        plan = writePlan(opts.work, `fleet-${run}-${k}`, GROUP, images);
        const r = await runDeploy(['apply', '--plan', plan, '--json'], env);
        expectOk(`the apply of ${k} changed nodes`, r);
        const c = countApply(r.json);
        if (c.pushes !== k || c.rollouts !== k || c.outcomes.some((o) => o !== 'ready')) throw new Error(`apply of ${k} changed nodes: ${c.pushes} pushes, ${c.rollouts} rollouts (${c.outcomes.join(',')})`);
        scaleRuns.get(k)!.push(r.ms);
        // planned alone (the verified check scoped the plan to the changed nodes), or the full plan and why
        const how = r.stderr.split('\n').find((l) => /planned alone|full plan:/.test(l)) ?? '';
        if (/planned alone/.test(how)) scoped.set(k, (scoped.get(k) ?? 0) + 1);
        log(`fleet: ${k} changed node(s): ${(r.ms / 1000).toFixed(1)} s (${/planned alone/.test(how) ? 'scoped plan' : how.replace(/^.*full plan: /, 'full plan: ') || 'full plan'})`);
      }
    }
  } finally {
    for (const a of built) rmSync(a, { force: true });
  }
  const scale = opts.sizes.map((size) => ({ size, ms: spread(scaleRuns.get(size)!), runs: scaleRuns.get(size)!, scoped: scoped.get(size) ?? 0 }));

  // The cluster's floor for P2: the same Deployments rolled by kubectl alone (a pod replaced per
  // node, the image already on the host), one size after the other, each run.
  const floorSizes = [1, 10].filter((k) => offsets.has(k));
  const floorRuns = new Map<number, number[]>(floorSizes.map((k) => [k, []]));
  for (let run = 1; run <= (floorSizes.length ? opts.runs : 0); run++) {
    for (const k of floorSizes) {
      const ms = rolloutRestartMs(opts.cluster, opts.namespace, Array.from({ length: k }, (_, i) => nodeName(offsets.get(k)! + i)));
      floorRuns.get(k)!.push(ms);
      log(`fleet: the cluster alone, ${k} Deployment(s) restarted and rolled out: ${(ms / 1000).toFixed(1)} s`);
    }
  }
  const clusterFloor = floorSizes.map((size) => ({ size, ms: spread(floorRuns.get(size)!), runs: floorRuns.get(size)! }));
  const m = (k: number) => scale.find((s) => s.size === k)?.ms.median ?? Number.NaN;
  return {
    initialApplyMs: first.ms,
    noopApply,
    plan: { deploy: deploySpread, tofu: tofuSpread, ratio: deploySpread.median / tofuSpread.median, deployRuns, tofuRuns },
    noop,
    scale,
    scaleRatio: m(10) / m(1),
    clusterFloor,
  };
}

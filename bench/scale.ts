/**
 * P10 (issue 32): the same kind of group at 4x the scale (BENCH_SCALE_NODES, 200), in a
 * namespace and state key of its own, after the 50-node part is gone (two groups' probes at
 * once would measure the host, not deploy):
 *   - the verified no-op plan of the whole group (goal <= 1.5 s);
 *   - P2a at this size: 1 node given a new image (goal <= 1.2x P2a at 50, same run: the cost
 *     of one change must not grow with the group), with its timeline (apply-timeline.ts);
 *   - the full plan (DEPLOY_FAST_PLAN=off) against a bare `tofu plan` of the same graph and
 *     state on the stock provider (reported, no goal);
 *   - the host's memory (MemAvailable) before the group and with it, and the load.
 * The group comes up in waves (`--max-unavailable`): 200 first boots at once starve 2 cores.
 * Its probes run every BENCH_SCALE_PROBE_PERIOD (--probe-period, default here 60s; liveness 3x):
 * at deploy's default 10s, 200 pods are 27 runc execs a second, which held this host at load
 * 277 with 110 pods up (2026-12-03); at 60s they are 4.4 a second, less than the 50-node part's
 * 6.7 at the default, so P10 compares one change in two groups that load the host alike.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { buildImage, log, type GroupBenchOptions, type NodeImage } from './lib/bench-env.ts';
import { phases, renderTimeline, timeDeploy } from './lib/apply-timeline.ts';
import { countApply, runDeploy, writePlan } from './lib/deploy-run.ts';
import { bareGraph, bareTofuPlanMs, STOCK } from './noop-plan.ts';
import { medianRun, secs, spread, type Spread } from './lib/stats.ts';

export interface ScaleOptions extends GroupBenchOptions {
  /** how many nodes the first apply brings up at once (--max-unavailable) */
  wave: number;
  /** --probe-period of the group (a duration, e.g. 60s) */
  probePeriod: string;
}

export interface ScaleResults {
  nodes: number;
  probePeriod: string;
  firstApplyMs: number;
  /** MiB available before the group and with it, and the 1-minute load with it */
  memory: { beforeMiB: number; withGroupMiB: number; load1: number };
  noopPlan: { ms: Spread; runs: number[] };
  oneNode: { ms: Spread; runs: number[]; scoped: number; timeline: string; phases: ReturnType<typeof phases> };
  fullPlan: { deploy: Spread; tofu: Spread; deployRuns: number[]; tofuRuns: number[] };
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
  const memory = { beforeMiB, withGroupMiB: memAvailableMiB(), load1: loadavg()[0]! };
  log(`scale: MemAvailable ${memory.beforeMiB} MiB before the group, ${memory.withGroupMiB} MiB with it; load ${memory.load1.toFixed(1)}`);

  // the verified no-op plan of the whole group (a warm-up first: the first plan after an apply records)
  const noopRuns: number[] = [];
  for (let run = 0; run <= opts.runs; run++) {
    const r = await runDeploy(['plan', '--plan', firstPlan, '--json'], env);
    if (r.exitCode !== 0) throw new Error(`deploy plan of ${opts.nodes} nodes exited ${r.exitCode}: ${r.stderr.split('\n').slice(-10).join('\n')}`);
    const verified = r.json?.targets?.every((t: any) => t.verifiedNoop === true) === true;
    if (run > 0 && !verified) throw new Error(`the no-op plan of ${opts.nodes} nodes was not verified by the check: ${r.stderr.split('\n').filter((l) => /full plan/.test(l)).join(' / ')}`);
    if (run > 0) noopRuns.push(r.ms);
    log(`scale: no-op plan ${secs(r.ms)} s${run === 0 ? ' (warm-up)' : verified ? ' (verified)' : ''}`);
  }

  // P2a at this size: node 1 given a new image, each run
  const oneRuns: number[] = [];
  let scoped = 0;
  const timelines: { ms: number; timeline: string; phases: ReturnType<typeof phases> }[] = [];
  for (let run = 1; run <= opts.runs; run++) {
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
  }
  const median = medianRun(timelines);

  // the full plan against bare tofu on the same graph and state (stock provider, as P1)
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
  return {
    nodes: opts.nodes,
    probePeriod: opts.probePeriod,
    firstApplyMs: first.ms,
    memory,
    noopPlan: { ms: spread(noopRuns), runs: noopRuns },
    oneNode: { ms: spread(oneRuns), runs: oneRuns, scoped, timeline: median.timeline, phases: median.phases },
    fullPlan: { deploy: spread(deployRuns), tofu: spread(tofuRuns), deployRuns, tofuRuns },
  };
}

// `npm run bench:apply`: issue 32's profile of the apply of changed nodes in a group of N, beside
// the cluster's own floor, in one run against the local cluster. Never part of `npm test`.
//   First: the group brought up (waves of BENCH_WAVE), then per run, interleaved:
//   - P2a: 1 node given a new image: `deploy apply` timed, with its timeline (every process
//     under it, sampled from /proc, and every progress line: bench/lib/apply-timeline.ts);
//   - P2b: 10 nodes given a new image (when BENCH_P2B is not 0);
//   - the floor: `kubectl rollout restart` of the same 1 (and 10) Deployments, then
//     `rollout status` of each until it is rolled out (no deployer: the cluster's own part).
//   The floors run after every deploy run (a restart is a hand edit that the next apply keeps).
//   Prints the medians, ratios, goals and verdicts and the timeline of the median 1-node run;
//   writes bench/results/apply-<N>.json.
// Env: BENCH_NODES (50), BENCH_RUNS (3), BENCH_WAVE (10), BENCH_P2B (1), BENCH_KEEP (0: the
// namespace is deleted at the end; 1 keeps it and its state for another look), BENCH_STATE_DIR
// (with BENCH_KEEP, a kept group to reuse: its state directory), BENCH_PROBE_PERIOD (the
// group's --probe-period, e.g. 60s as the 200-node group of bench/scale.ts; default deploy's).
// The namespace is `bench-apply-*`; the embedded state backend.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildImage, embeddedEnv, ensureCluster, kubectl, log, rolloutRestartMs, type NodeImage } from './lib/bench-env.ts';
import { countApply, runDeploy, writePlan } from './lib/deploy-run.ts';
import { phases, renderTimeline, timeDeploy, type Timeline } from './lib/apply-timeline.ts';
import { medianRun, secs, showSecs, spread, type Spread } from './lib/stats.ts';
import { resultsDir } from './lib/write-results.ts';

const nodes = Number(process.env.BENCH_NODES ?? 50);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const wave = Number(process.env.BENCH_WAVE ?? 10);
const withP2b = process.env.BENCH_P2B !== '0';
const keep = process.env.BENCH_KEEP === '1';

const cluster = ensureCluster();
const reuse = process.env.BENCH_STATE_DIR;
const work = reuse ?? mkdtempSync(join(tmpdir(), 'bench-apply-'));
const namespace = reuse ? readFileSync(join(work, 'namespace'), 'utf8').trim() : `bench-apply-${Math.random().toString(16).slice(2, 8)}`;
if (!reuse) writeFileSync(join(work, 'namespace'), namespace);
const env = { ...embeddedEnv(cluster, namespace, work, 300), ...(process.env.BENCH_PROBE_PERIOD ? { DEPLOY_PROBE_PERIOD: process.env.BENCH_PROBE_PERIOD } : {}) };
const names = Array.from({ length: nodes }, (_, i) => `n${String(i + 1).padStart(3, '0')}`);

function expectApplied(what: string, t: { exitCode: number; stdout: string }, changed: number): void {
  if (t.exitCode !== 0) throw new Error(`${what} exited ${t.exitCode}`);
  const c = countApply(JSON.parse(t.stdout));
  if (c.pushes !== changed || c.rollouts !== changed || c.outcomes.some((o) => o !== 'ready')) throw new Error(`${what}: ${c.pushes} pushes, ${c.rollouts} rollouts (${c.outcomes.join(',')}), expected ${changed} each`);
}

async function main(): Promise<number> {
  log(`apply profile: ${nodes} nodes in ${namespace}, ${runs} runs, work ${work}`);
  const base = buildImage('good');
  const images: Record<string, NodeImage> = Object.fromEntries(names.map((n) => [n, base]));
  const imagesFile = join(work, 'images.json');
  if (reuse && existsSync(imagesFile)) Object.assign(images, JSON.parse(readFileSync(imagesFile, 'utf8')));
  else {
    const t = await runDeploy(['apply', '--plan', writePlan(work, 'first', 'bench', images), '--json'], { ...env, DEPLOY_MAX_UNAVAILABLE: String(wave) });
    if (t.exitCode !== 0) throw new Error(`the first apply of ${nodes} nodes exited ${t.exitCode}: ${t.stderr.slice(-2000)}`);
    log(`first apply of ${nodes} nodes in waves of ${wave}: ${secs(t.ms)} s`);
  }
  const one: Timeline[] = [];
  const ten: number[] = [];
  const floor1: number[] = [];
  const floor10: number[] = [];
  try {
    for (let run = 1; run <= runs; run++) {
      const stamp = `${namespace}-${Date.now()}`;
      const image1 = buildImage('good', `BENCH_APPLY=${stamp}-1`);
      images[names[0]!] = image1;
      const t1 = await timeDeploy(['apply', '--plan', writePlan(work, `run-${run}-1`, 'bench', images), '--json'], env);
      expectApplied('the apply of 1 changed node', t1, 1);
      one.push(t1);
      log(`run ${run}: 1 changed node ${secs(t1.ms)} s`);
      if (withP2b) {
        const image10 = buildImage('good', `BENCH_APPLY=${stamp}-10`);
        for (const n of names.slice(1, 11)) images[n] = image10;
        const t10 = await timeDeploy(['apply', '--plan', writePlan(work, `run-${run}-10`, 'bench', images), '--json'], env);
        expectApplied('the apply of 10 changed nodes', t10, 10);
        ten.push(t10.ms);
        log(`run ${run}: 10 changed nodes ${secs(t10.ms)} s`);
      }
      rmSync(image1.archive, { force: true });
    }
    // The floors after every deploy run: a `kubectl rollout restart` is a hand edit (kept, and
    // said), which sends the next deploy run of that node to tofu's refresh
    for (let run = 1; run <= runs; run++) {
      floor1.push(rolloutRestartMs(cluster, namespace, [names[0]!]));
      log(`run ${run}: the floor for 1: ${secs(floor1.at(-1)!)} s`);
      if (withP2b) {
        floor10.push(rolloutRestartMs(cluster, namespace, names.slice(1, 11)));
        log(`run ${run}: the floor for 10: ${secs(floor10.at(-1)!)} s`);
      }
    }
  } finally {
    writeFileSync(imagesFile, JSON.stringify(images));
    if (!keep) {
      try {
        kubectl(cluster, ['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']);
      } catch (err) {
        log(`could not delete namespace ${namespace}: ${String(err)}`);
      }
      rmSync(work, { recursive: true, force: true });
    } else log(`kept: namespace ${namespace}, BENCH_STATE_DIR=${work}`);
  }
  const ms1 = spread(one.map((t) => t.ms));
  const f1 = spread(floor1);
  const median = medianRun(one);
  const row = (what: string, d: Spread, f: Spread, goal: number) => {
    const ratio = d.median / f.median;
    return { what, deploy: d, floor: f, ratio, goal: `<= ${goal}x the floor`, met: ratio <= goal };
  };
  const figures = [row(`P2a 1 node of ${nodes} given a new image`, ms1, f1, 1.5)];
  if (withP2b) figures.push(row(`P2b 10 nodes of ${nodes}`, spread(ten), spread(floor10), 1.5));
  const report = {
    date: new Date().toISOString(),
    host: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()[1]!.toFixed(1)} (5 min) at the end`,
    nodes,
    runs,
    figures,
    profile: { phases: phases(median), timeline: renderTimeline(median) },
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `apply-${nodes}.json`), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`the median 1-node apply's timeline:\n${report.profile.timeline}\n`);
  for (const f of figures) console.log(`${f.what}: deploy ${showSecs(f.deploy)} / floor ${showSecs(f.floor)} = ${f.ratio.toFixed(2)}; goal ${f.goal}: ${f.met ? 'met' : 'NOT met'}`);
  return figures.every((f) => f.met) ? 0 : 1;
}

process.exitCode = await main();

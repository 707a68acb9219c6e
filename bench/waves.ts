// `npm run bench:waves`: issue 31's goals for waves, measured side by side in one run against the
// local cluster, printed with their goals and verdicts and written to bench/results/waves.json.
// Never part of `npm test`.
//   P8 blast radius: one broken image given to every node with waves of W: at most W nodes ever
//      down at once (sampled from the API every 250 ms), the nodes of the later waves never
//      restarted (same pod UID), exit 4.
//   P9 cost of safety: a good image to every node in waves of W, against the same rollout with no
//      limit (the two interleaved, BENCH_RUNS each; goal: median ratio <= 1.5).
// Env: BENCH_NODES (default 50), BENCH_WAVE (default 10), BENCH_RUNS (default 1: each run is a
// rollout of every node, minutes at 50), BENCH_ROLLOUT_TIMEOUT (seconds, 300). The namespace is
// `bench-waves-*`, deleted at the end; the embedded state backend in a temporary directory.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { buildImage, embeddedEnv, ensureCluster, kubectl, kubectlBin, log, type NodeImage } from './lib/bench-env.ts';
import { runDeploy, writePlan } from './lib/deploy-run.ts';
import { secs, spread, showSecs } from './lib/stats.ts';
import { deploymentsDown, downWhile } from '../test/support/down-sampler.ts';
import { resultsDir } from './lib/write-results.ts';

const nodes = Number(process.env.BENCH_NODES ?? 50);
const wave = Number(process.env.BENCH_WAVE ?? 10);
const runs = Number(process.env.BENCH_RUNS ?? 1);
const timeout = Number(process.env.BENCH_ROLLOUT_TIMEOUT ?? 300);

const cluster = ensureCluster();
const work = mkdtempSync(join(tmpdir(), 'bench-waves-'));
const namespace = `bench-waves-${Math.random().toString(16).slice(2, 8)}`;
const env = embeddedEnv(cluster, namespace, work, timeout);
const names = Array.from({ length: nodes }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
const planOf = (name: string, image: NodeImage) => writePlan(work, name, 'bench', Object.fromEntries(names.map((n) => [n, image])));
const apply = (plan: string, limit: number | undefined) => runDeploy(['apply', '--plan', plan, '--target', 'all', '--json'], { ...env, ...(limit !== undefined ? { DEPLOY_MAX_UNAVAILABLE: String(limit) } : {}) });

/** How many Deployments of the namespace have no ready pod (undefined: the read failed). */
async function countDown(): Promise<number | undefined> {
  const r = await execa(kubectlBin, ['--kubeconfig', cluster.KUBE_CONFIG_PATH, '-n', namespace, 'get', 'deployments', '-o', 'json'], { reject: false });
  return r.exitCode === 0 ? deploymentsDown(r.stdout) : undefined;
}

function podUids(): Map<string, string> {
  const pods = JSON.parse(kubectl(cluster, ['-n', namespace, 'get', 'pods', '-o', 'json'])).items;
  return new Map(pods.filter((p: any) => !p.metadata.deletionTimestamp).map((p: any) => [p.metadata.labels['app.kubernetes.io/name'], p.metadata.uid]));
}

async function main(): Promise<number> {
  log(`waves bench: ${nodes} nodes, waves of ${wave}, ${runs} run(s) per variant, namespace ${namespace}`);
  const images = [buildImage('good'), buildImage('good', 'waves_bench=a'), buildImage('good', 'waves_bench=b'), buildImage('broken')];
  const [good, a, b, broken] = images as [NodeImage, NodeImage, NodeImage, NodeImage];
  try {
    // the first apply in waves too: 50 first boots at once load 2 cores for minutes
    const first = await apply(planOf('first', good), wave);
    if (first.exitCode !== 0) throw new Error(`the first apply failed (${first.exitCode}): ${first.stderr.slice(-2000)}`);
    log(`first apply: ${secs(first.ms)} s`);

    // P8: the broken image to every node, waves of `wave`
    const before = podUids();
    const { result: p8, maxDown, samples } = await downWhile(apply(planOf('broken', broken), wave), countDown);
    const after = podUids();
    const laterWaves = names.slice(wave);
    const restarted = laterWaves.filter((n) => after.get(n) !== before.get(n)).length;
    const rolledBack = (p8.json?.targets?.[0]?.rollouts ?? []).filter((r: any) => r.outcome === 'rolled-back').length;
    log(`P8: exit ${p8.exitCode}, at most ${maxDown} down (${samples} samples), ${restarted} of the ${laterWaves.length} later-wave nodes restarted, ${rolledBack} rolled back, ${secs(p8.ms)} s`);

    // P9: good images, waves against no limit, interleaved (a, b, a, b ... so each run changes every node)
    const waved: number[] = [];
    const open: number[] = [];
    let next = a;
    for (let i = 0; i < runs; i += 1) {
      for (const limit of [wave, undefined]) {
        next = next === a ? b : a;
        const r = await apply(planOf(`p9-${i}-${limit ?? 'none'}`, next), limit);
        if (r.exitCode !== 0) throw new Error(`P9 apply (${limit ?? 'no limit'}) failed (${r.exitCode}): ${r.stderr.slice(-2000)}`);
        (limit === undefined ? open : waved).push(r.ms);
        log(`P9 ${limit === undefined ? 'no limit' : `waves of ${limit}`}: ${secs(r.ms)} s`);
      }
    }
    const w = spread(waved);
    const o = spread(open);
    const ratio = w.median / o.median;
    const p8met = p8.exitCode === 4 && maxDown <= wave && restarted === 0;
    const report = {
      date: new Date().toISOString(),
      host: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()[1]!.toFixed(1)} (5 min) at the end`,
      nodes,
      wave,
      runs,
      P8: { goal: `exit 4, at most ${wave} down at once, 0 of ${laterWaves.length} later-wave nodes restarted`, exitCode: p8.exitCode, maxDown, samples, laterWaveRestarted: restarted, rolledBack, seconds: p8.ms / 1000, met: p8met },
      P9: { goal: 'waves / no limit <= 1.5', wavesMs: w, noLimitMs: o, ratio, met: ratio <= 1.5 },
    };
    writeFileSync(join(resultsDir, 'waves.json'), JSON.stringify(report, null, 2) + '\n');
    console.log(`P8 blast radius, ${nodes} nodes, broken image, waves of ${wave}: exit ${p8.exitCode}; at most ${maxDown} down at once (${samples} samples); ${restarted} of ${laterWaves.length} later-wave nodes restarted; goal: ${report.P8.goal}: ${p8met ? 'met' : 'NOT met'}`);
    console.log(`P9 cost of safety, ${nodes} nodes, good image: waves of ${wave} ${showSecs(w)} / no limit ${showSecs(o)} = ${ratio.toFixed(2)}; goal <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
    return p8met && ratio <= 1.5 ? 0 : 1;
  } finally {
    try {
      kubectl(cluster, ['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']);
    } catch (err) {
      log(`could not delete namespace ${namespace}: ${String(err)}`);
    }
    rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();

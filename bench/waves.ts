// `npm run bench:waves`: issue 31's goals for waves, measured side by side in one run against the
// local cluster, printed with their goals and verdicts and written to bench/results/waves.json.
// Never part of `npm test`.
//   P8 blast radius: one broken image given to every node with waves of W: at most W nodes ever
//      down at once (sampled from the API every 250 ms), the nodes of the later waves never
//      restarted (same pod UID), exit 4.
//   P9 cost of safety: a good image to every node in waves of W, against the same rollout with no
//      limit (the two interleaved, BENCH_RUNS each; goal: median ratio <= 1.5). Beside it (issue
//      47) the same waves with a soak of S seconds (--soak), interleaved with the two: it should
//      take the waves' time plus S per wave (every wave soaks, the last too); the overhead beyond
//      the soak is reported, goal <= 10 % of that expected time (lib/soak-cost.ts).
// Env: BENCH_NODES (default 50), BENCH_WAVE (default 10), BENCH_RUNS (default 1: each run is a
// rollout of every node, minutes at 50), BENCH_SOAK (seconds, default 30; 0: no soak variant),
// BENCH_ROLLOUT_TIMEOUT (seconds, 300). The namespace is
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
import { soakCost } from './lib/soak-cost.ts';

const nodes = Number(process.env.BENCH_NODES ?? 50);
const wave = Number(process.env.BENCH_WAVE ?? 10);
const runs = Number(process.env.BENCH_RUNS ?? 1);
const soak = Number(process.env.BENCH_SOAK ?? 30);
const timeout = Number(process.env.BENCH_ROLLOUT_TIMEOUT ?? 300);

const cluster = ensureCluster();
const work = mkdtempSync(join(tmpdir(), 'bench-waves-'));
const namespace = `bench-waves-${Math.random().toString(16).slice(2, 8)}`;
const env = embeddedEnv(cluster, namespace, work, timeout);
const names = Array.from({ length: nodes }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
const planOf = (name: string, image: NodeImage) => writePlan(work, name, 'bench', Object.fromEntries(names.map((n) => [n, image])));
/** One P9 variant: waves of `limit` (or none), with a soak of `soakSeconds` (or none). */
interface Variant {
  readonly name: string;
  readonly limit: number | undefined;
  readonly soakSeconds: number;
}
const apply = (plan: string, limit: number | undefined, soakSeconds = 0) =>
  runDeploy(['apply', '--plan', plan, '--target', 'all', '--json'], { ...env, ...(limit !== undefined ? { DEPLOY_MAX_UNAVAILABLE: String(limit) } : {}), ...(soakSeconds > 0 ? { DEPLOY_SOAK: `${soakSeconds}s` } : {}) });

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
  log(`waves bench: ${nodes} nodes, waves of ${wave}, ${soak > 0 ? `a soak of ${soak}s beside P9, ` : ''}${runs} run(s) per variant, namespace ${namespace}`);
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

    // P9: good images, waves against no limit (and waves with a soak), interleaved (a, b, a, b
    // ... so each run changes every node)
    const variants: Variant[] = [
      { name: `waves of ${wave}`, limit: wave, soakSeconds: 0 },
      { name: 'no limit', limit: undefined, soakSeconds: 0 },
      ...(soak > 0 ? [{ name: `waves of ${wave}, soak ${soak}s`, limit: wave, soakSeconds: soak }] : []),
    ];
    const times = new Map<Variant, number[]>(variants.map((v) => [v, []]));
    let next = a;
    for (let i = 0; i < runs; i += 1) {
      for (const v of variants) {
        next = next === a ? b : a;
        const r = await apply(planOf(`p9-${i}-${v.limit ?? 'none'}-${v.soakSeconds}`, next), v.limit, v.soakSeconds);
        if (r.exitCode !== 0) throw new Error(`P9 apply (${v.name}) failed (${r.exitCode}): ${r.stderr.slice(-2000)}`);
        times.get(v)!.push(r.ms);
        log(`P9 ${v.name}: ${secs(r.ms)} s`);
      }
    }
    const w = spread(times.get(variants[0]!)!);
    const o = spread(times.get(variants[1]!)!);
    const ratio = w.median / o.median;
    const soaked = variants[2] === undefined ? undefined : spread(times.get(variants[2])!);
    const soakVerdict = soaked === undefined ? undefined : soakCost({ nodes, wave, soakSeconds: soak, wavesMs: w.median, soakMs: soaked.median });
    const p8met = p8.exitCode === 4 && maxDown <= wave && restarted === 0;
    const report = {
      date: new Date().toISOString(),
      host: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()[1]!.toFixed(1)} (5 min) at the end`,
      nodes,
      wave,
      runs,
      P8: { goal: `exit 4, at most ${wave} down at once, 0 of ${laterWaves.length} later-wave nodes restarted`, exitCode: p8.exitCode, maxDown, samples, laterWaveRestarted: restarted, rolledBack, seconds: p8.ms / 1000, met: p8met },
      P9: { goal: 'waves / no limit <= 1.5', wavesMs: w, noLimitMs: o, ratio, met: ratio <= 1.5 },
      ...(soaked && soakVerdict ? { P9soak: { ...soakVerdict, soakMs: soaked } } : {}),
    };
    writeFileSync(join(resultsDir, 'waves.json'), JSON.stringify(report, null, 2) + '\n');
    console.log(`P8 blast radius, ${nodes} nodes, broken image, waves of ${wave}: exit ${p8.exitCode}; at most ${maxDown} down at once (${samples} samples); ${restarted} of ${laterWaves.length} later-wave nodes restarted; goal: ${report.P8.goal}: ${p8met ? 'met' : 'NOT met'}`);
    console.log(`P9 cost of safety, ${nodes} nodes, good image: waves of ${wave} ${showSecs(w)} / no limit ${showSecs(o)} = ${ratio.toFixed(2)}; goal <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
    if (soaked && soakVerdict) {
      const v = soakVerdict;
      console.log(
        `P9 with a soak of ${soak}s beside it: waves of ${wave} with the soak ${showSecs(soaked)}; expected ${secs(v.expectedMs)} s (waves ${secs(w.median)} s + ${v.waveCount} x ${soak} s); overhead beyond the soak ${secs(v.overheadMs)} s (${secs(v.overheadPerWaveMs)} s per wave), ratio ${v.ratio.toFixed(2)}; goal: ${v.goal}: ${v.met ? 'met' : 'NOT met'}`,
      );
    }
    return p8met && ratio <= 1.5 && (soakVerdict?.met ?? true) ? 0 : 1;
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

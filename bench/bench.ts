// `npm run bench`: every benchmark of issue 11 in one run, against the local cluster; prints
// every figure with its goal and whether it is met, and writes bench/results/report.md,
// bench/results/bench.svg and bench/results/bench.json. Never part of `npm test`.
//   P1 no-op plan of 50 nodes: deploy plan vs bare tofu plan, stock provider (goal: ratio <= 0.4)
//   P6 the same no-op plan vs helm upgrade --dry-run=server of the same objects (goal: <= 2)
//   P2 scale-out: apply of 10 vs 1 changed node, curve 1..20     (goal: ratio <= 1.5)
//   P3 time to roll back: deploy apply vs helm upgrade --rollback-on-failure (goal: <= 0.2)
//   P4 no-op apply: pushes, pod restarts, rollout waits          (goal: all 0)
//   P5 start-up and synth (bench/startup-synth.mjs)
//   P2a/P2b (issue 48) the applies of 1 and 10 changed nodes of 50 against Helm 4's
//      `helm upgrade --wait` of a release of the same nodes (bench/helm-chart, its pods running
//      beside the group's; bench/lib/helm-group.ts) giving the same nodes a new image (goal:
//      <= 1.0x Helm), with the cluster's floor beside (`kubectl rollout restart` + `rollout
//      status` of the release's same Deployments); the three interleaved, same run
//   P10 the same kind of group at BENCH_SCALE_NODES (200): verified no-op plan, the full plan
//      against bare tofu, memory, then a 1-node apply against Helm's of the same release at 200
//      (<= 1.0x) and against deploy's own at 50 (<= 2x), the floor beside (bench/scale.ts)
//   P11 the README's first command cold: read from bench/results/cold-start.json, which
//      `npm run bench:cold` writes (a cold start cannot share the host with the groups here)
// Env: BENCH_RUNS (default 3), BENCH_NODES (default 50), BENCH_ROLLOUT_TIMEOUT (seconds, 90),
// BENCH_SIZES (default 1,2,5,10,20; none: P2 kept from the previous bench.json), BENCH_BATCH (nodes per first apply, 10), BENCH_ONLY (comma list of fleet,rollback,synth,scale,cold; default all), BENCH_SCALE_NODES (200), BENCH_WAVE (10: waves of the 200-node group's first apply), BENCH_SCALE_PROBE_PERIOD (60s: that group's --probe-period), BENCH_PARALLELISM (-parallelism levels of a bare patched tofu plan, e.g. 2,10,30; default none: measured on 2026-12-01, no lever on 2 cores),
// BENCH_HELM_GROUPS (fleet,scale: the parts whose changes Helm makes too, in a release of the
// same nodes with its pods running; none: deploy and the floor alone, as before issue 48; at
// 200 nodes the host then carries 400 pods), BENCH_SETTLE (120: at most this many seconds of
// waiting, once both groups are up, for the host's load to stop falling; 0: none),
// BENCH_HELM_FLAGS (none: more flags for every helm command of those releases, e.g. `--qps 50`;
// by default Helm runs at its client's defaults, 5 requests a second past a burst of 100).
// The cluster is brought up when it does not answer (never down); namespaces are `bench-*` and
// deleted at the end.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, hostname, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { benchFleet } from './fleet.ts';
import { buildHelm, cacheDir, ensureCluster, kubectl, log, pinnedVersion, root } from './lib/bench-env.ts';
import { figures, type BenchResults } from './lib/report-md.ts';
import { resultsDir, writeResults } from './lib/write-results.ts';
import { benchRollback } from './rollback-vs-helm.ts';
import { benchScale } from './scale.ts';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const nodes = Number(process.env.BENCH_NODES ?? 50);
const timeoutSeconds = Number(process.env.BENCH_ROLLOUT_TIMEOUT ?? 90);
const only = new Set((process.env.BENCH_ONLY ?? 'fleet,rollback,synth,scale,cold').split(','));
const scaleNodes = Number(process.env.BENCH_SCALE_NODES ?? 200);
const parallelism = (process.env.BENCH_PARALLELISM ?? '').split(',').filter((p) => p !== '').map(Number);
const sizes = process.env.BENCH_SIZES === 'none' ? [] : (process.env.BENCH_SIZES ?? '1,2,5,10,20').split(',').map(Number);
const helmGroups = new Set((process.env.BENCH_HELM_GROUPS ?? 'fleet,scale').split(','));
const settleSeconds = Number(process.env.BENCH_SETTLE ?? 120);
const helmFlags = (process.env.BENCH_HELM_FLAGS ?? '').split(' ').filter((f) => f !== '');
/** deploy's rollout timeout in the bench, and Helm's `--timeout` of a measured change */
const rolloutSeconds = 300;

/** `deploy state serve` on a free loopback port: the state backend both tofu and deploy use. */
async function startBackend(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ url: string; stop: () => void }> {
  const child = spawn(join(root, 'bin/deploy'), ['state', 'serve', '--listen', '127.0.0.1:0', '--data', dataDir], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('deploy state serve printed no address within 30 s')), 30_000);
    lines.once('line', (l) => {
      clearTimeout(timer);
      resolve(l.trim());
    });
    child.once('exit', (code) => reject(new Error(`deploy state serve exited ${code}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/**
 * With BENCH_ONLY, the parts not run now are kept from the previous bench/results/bench.json
 * (each part says when it was measured), so one part can be measured again on its own, e.g.
 * after the shared cluster was restarted under a run.
 */
function readEarlier(): BenchResults | undefined {
  try {
    return JSON.parse(readFileSync(join(resultsDir, 'bench.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

function keepEarlierParts(results: BenchResults): void {
  if (!process.env.BENCH_ONLY) return;
  const earlier = readEarlier();
  if (!earlier) return;
  for (const part of ['fleet', 'rollback', 'synth', 'scale', 'cold'] as const) {
    if (only.has(part) || earlier[part] === undefined) continue;
    (results as any)[part] = earlier[part];
    results.measuredAt[part] = earlier.measuredAt?.[part] ?? earlier.date;
  }
}

async function main(): Promise<number> {
  const cluster = ensureCluster();
  execFileSync('bash', [join(root, 'toolchain/build-tools.sh')], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 3_600_000 });
  // the stock builds too (P1's base and the deploy-stock variant: tofu.rc and mirror/); skipped when cached
  if (only.has('fleet')) execFileSync('bash', [join(root, 'toolchain/build-tools.sh')], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 3_600_000, env: { ...process.env, DEPLOY_PROVIDER_PATCHES: 'none' } });
  const tofuVersion = await pinnedVersion('TOFU_VERSION');
  const helm = only.has('rollback') || only.has('fleet') || (only.has('scale') && helmGroups.has('scale')) ? buildHelm() : '';
  const work = mkdtempSync(join(tmpdir(), 'bench-'));
  const stamp = Math.random().toString(16).slice(2, 8);
  const namespaces = { fleet: `bench-fleet-${stamp}`, deploy: `bench-rb-${stamp}`, helm: `bench-helm-${stamp}`, p6: `bench-p6-${stamp}`, p2helm: `bench-p2-helm-${stamp}`, scale: `bench-p10-${stamp}`, p10helm: `bench-p10-helm-${stamp}` };
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...cluster,
    DEPLOY_STATE_DIR: join(work, 'state'),
    DEPLOY_CACHE_DIR: cacheDir,
    DEPLOY_TOFU: join(cacheDir, 'tofu', tofuVersion, 'tofu'),
    // no TF_CLI_CONFIG_FILE: deploy picks the cache's mirror by DEPLOY_PROVIDER_PATCHES (the
    // patched one by default); the bare tofu plans name theirs (bench/noop-plan.ts)
    DEPLOY_LOG_LEVEL: 'warn',
    DEPLOY_ROLLOUT_TIMEOUT: `${rolloutSeconds}s`,
  };
  const backend = await startBackend(join(work, 'backend'), baseEnv);
  const env = { ...baseEnv, TF_HTTP_ADDRESS: backend.url };
  const results: BenchResults = { date: new Date().toISOString(), host: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ${hostname()}, load average ${loadavg()[1]!.toFixed(1)} (5 min) at the start`, runs, nodes, errors: [], measuredAt: {} };
  keepEarlierParts(results);
  const attempt = async (name: string, f: () => Promise<void>) => {
    if (!only.has(name)) return;
    try {
      await f();
      results.measuredAt[name] = new Date().toISOString();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      log(`${name} failed: ${msg}`);
      results.errors.push(`${name}: ${msg}`);
    }
  };
  let cleaned = false;
  const deleteNamespaces = (list: string[], wait: boolean) => {
    for (const ns of list) {
      try {
        kubectl(cluster, ['delete', 'namespace', ns, '--ignore-not-found', `--wait=${wait}`, '--timeout=600s']);
      } catch (err) {
        log(`could not delete namespace ${ns}: ${String(err)}`);
      }
    }
  };
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    deleteNamespaces(Object.values(namespaces), false);
    backend.stop();
    rmSync(work, { recursive: true, force: true });
  };
  // Stopped half way (Ctrl-C reaches the running deploy too, through the process group):
  // leave no bench namespace or state server behind; nothing is written.
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping; deleting the bench namespaces; no results written`);
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await attempt('synth', async () => {
      const out = join(work, 'synth.json');
      execFileSync(process.execPath, [join(root, 'bench/startup-synth.mjs'), '--runs', String(Math.max(runs, 5)), '--json', out], { stdio: ['ignore', 2, 'inherit'], timeout: 600_000 });
      results.synth = JSON.parse(readFileSync(out, 'utf8')).rows;
    });
    await attempt('rollback', async () => {
      results.rollback = await benchRollback({ cluster, env, work, helm, deployNamespace: namespaces.deploy, helmNamespace: namespaces.helm, runs, timeoutSeconds });
    });
    await attempt('fleet', async () => {
      const earlier = sizes.length ? undefined : readEarlier();
      results.fleet = await benchFleet({
        cluster, env, work, namespace: namespaces.fleet, nodes, runs, sizes, batch: Number(process.env.BENCH_BATCH ?? 10), helm, helmNamespace: namespaces.p6, parallelism,
        ...(helmGroups.has('fleet') ? { helmGroupNamespace: namespaces.p2helm } : {}),
        helmTimeoutSeconds: rolloutSeconds,
        helmFlags,
        settleSeconds,
      });
      if (results.fleet.helmError) results.errors.push(`fleet, Helm's side of P2a and P2b: ${results.fleet.helmError}`);
      if (earlier?.fleet?.scale.length) {
        results.fleet.scale = earlier.fleet.scale;
        results.fleet.scaleRatio = earlier.fleet.scaleRatio;
        results.fleet.scaleFrom = earlier.fleet.scaleFrom ?? { nodes: earlier.nodes, date: earlier.measuredAt?.fleet ?? earlier.date };
      }
    });
    await attempt('scale', async () => {
      // the 50-node groups' pods gone first: their probes alone load the 2 cores (load 7 here)
      log('scale: deleting the 50-node groups first (their pods load the host)');
      deleteNamespaces([namespaces.fleet, namespaces.p6, namespaces.p2helm], true);
      results.scale = await benchScale({
        cluster, env, work, namespace: namespaces.scale, nodes: scaleNodes, runs, wave: Number(process.env.BENCH_WAVE ?? 10), probePeriod: process.env.BENCH_SCALE_PROBE_PERIOD ?? '60s', helm,
        ...(helmGroups.has('scale') ? { helmGroupNamespace: namespaces.p10helm } : {}),
        helmTimeoutSeconds: rolloutSeconds,
        helmFlags,
        settleSeconds,
      });
      if (results.scale.helmError) results.errors.push(`scale, Helm's side of P10: ${results.scale.helmError}`);
      deleteNamespaces([namespaces.scale, namespaces.p10helm], false);
    });
    await attempt('cold', async () => {
      // P11 is measured alone (npm run bench:cold); the bench prints the last measurement
      const file = join(resultsDir, 'cold-start.json');
      if (!existsSync(file)) throw new Error('no bench/results/cold-start.json: run npm run bench:cold on an idle host (the local cluster down) first');
      results.cold = JSON.parse(readFileSync(file, 'utf8'));
    });
  } finally {
    cleanup();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }

  results.host += `, ${loadavg()[1]!.toFixed(1)} at the end (other work on the machine shares its 2 cores)`;
  writeResults(results, { json: true });

  const figs = figures(results);
  console.log(`\n${'figure'.padEnd(6)} ${'what'.padEnd(70)} ${'result'.padEnd(50)} goal -> met`);
  for (const f of figs) console.log(`${f.id.padEnd(6)} ${f.what.replace(/`/g, '').padEnd(70)} ${f.result.replace(/\*\*/g, '').padEnd(50)} ${f.goal} -> ${f.met === null ? '-' : f.met ? 'yes' : 'NO'}`);
  for (const e of results.errors) console.log(`NOT MEASURED: ${e.split('\n')[0]}`);
  console.log('\nreport: bench/results/report.md, chart: bench/results/bench.svg');
  return results.errors.length ? 1 : 0;
}

process.exitCode = await main();

// Benchmark of `deploy status` on 50 nodes (issue 21 item 3; goal < 2 s), not a test:
//   npm run bench:status          (builds first; or: node bench/status.ts after a build)
// Against the local cluster (brought up when it does not answer), in a namespace bench-status-*
// it deletes at the end, with the embedded state backend in a directory of its own.
//
// What is measured, exactly: a 50-node fleet of booted systemd pods is slow to deploy on this
// host, so the fleet is made cheaply. One node (n01) is applied by `deploy apply` (the real
// graph, state and rollout step). Then:
//   - the state: a new version of the target's state with the resources of n01 copied for
//     n02..n50 (same shape and size per node as a real apply; 50 Deployment resources);
//   - the cluster: n02..n50 are copies of n01's Deployment (labels, template, the last-rollout
//     annotation) with a nodeSelector no node has, so each has a real Pending pod and nothing
//     boots.
// `deploy status` then reads 50 nodes from the state and 50 Deployments and 50 pods from the
// API server (1 ok, 49 not-ready: exit 7, checked). Each run is the real CLI (bin/deploy), timed
// from spawn to exit; one warm-up run first (Node's compile cache), then BENCH_RUNS (default 7).
// For scale, `deploy state list` on the same backend (Node start, no cluster) is timed too.
// Writes bench/results/status.json.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildImage, ensureCluster, kubectl as kubectlOf, log, root } from './lib/bench-env.ts';
import { runDeploy, writePlan } from './lib/deploy-run.ts';
import { showSecs, spread } from './lib/stats.ts';

const NODES = Number(process.env.BENCH_STATUS_NODES ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const GOAL_MS = 2000;
const cluster = ensureCluster();
const kubectl = (args: string[], input?: string) => kubectlOf(cluster, args, input);
const name = (i: number) => `n${String(i).padStart(2, '0')}`;

const stamp = randomUUID().slice(0, 6);
const namespace = `bench-status-${stamp}`;
const group = 'bstatus';
const dir = mkdtempSync(join(tmpdir(), 'bench-status-'));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  ...cluster,
  K8S_NAMESPACE: namespace,
  DEPLOY_STATE_DIR: join(dir, 'state'),
  DEPLOY_STATE: 'embedded',
  DEPLOY_ROLLOUT_TIMEOUT: '180s',
  DEPLOY_LOG_LEVEL: 'warn',
  ...(process.env.DEPLOY_CACHE_DIR ? { DEPLOY_CACHE_DIR: process.env.DEPLOY_CACHE_DIR } : {}),
};

try {
  const good = buildImage('good');
  const one = writePlan(dir, 'one', group, { [name(1)]: good });
  const all = writePlan(dir, 'all', group, Object.fromEntries(Array.from({ length: NODES }, (_, i) => [name(i + 1), good])));
  log(`apply of ${name(1)} (namespace ${namespace})`);
  const applied = await runDeploy(['apply', '--plan', one, '--json'], env);
  if (applied.exitCode !== 0) throw new Error(`deploy apply failed (${applied.exitCode}): ${applied.stderr.slice(-2000)}`);

  log(`state: ${name(1)}'s resources copied for ${name(2)}..${name(NODES)}`);
  const { DataDirSource } = (await import(join(root, 'dist/src/state/source/data-dir-source.js'))) as typeof import('../src/state/source/data-dir-source.ts');
  const source = new DataDirSource(join(dir, 'state', 'state'));
  const key = `${group}-all`;
  const doc = JSON.parse((await source.read(key))!.toString('utf8'));
  const first = `-${name(1)}_`;
  const nodeResources = doc.resources.filter((r: { name: string }) => r.name.includes(first));
  for (let i = 2; i <= NODES; i++) {
    for (const r of nodeResources) doc.resources.push(JSON.parse(JSON.stringify(r).replaceAll(name(1), name(i))));
  }
  doc.serial += 1;
  const body = Buffer.from(JSON.stringify(doc));
  const lockId = randomUUID();
  await source.lock(key, { ID: lockId, Who: 'bench/status.ts', Operation: 'copy the node resources' });
  await source.write(key, body, lockId);
  await source.unlock(lockId, key);
  source.close();

  log(`cluster: ${NODES - 1} copies of ${name(1)}'s Deployment (and service account), each with one Pending pod`);
  const d = JSON.parse(kubectl(['-n', namespace, 'get', 'deployment', name(1), '-o', 'json']));
  const items = [];
  for (let i = 2; i <= NODES; i++) {
    const copy = JSON.parse(JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: name(i), namespace, labels: d.metadata.labels, annotations: d.metadata.annotations }, spec: d.spec }).replaceAll(name(1), name(i)));
    delete copy.metadata.annotations['deployment.kubernetes.io/revision'];
    copy.spec.template.spec.nodeSelector = { 'bench.deploy/no-such-node': 'true' };
    // its service account too: the ReplicaSet makes no pod without it
    items.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: copy.spec.template.spec.serviceAccountName, namespace } }, copy);
  }
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  for (let t = 0; ; t++) {
    const pods = JSON.parse(kubectl(['-n', namespace, 'get', 'pods', '-o', 'json'])).items.length;
    if (pods >= NODES) break;
    if (t > 120) throw new Error(`only ${pods} of ${NODES} pods after 2 min`);
    await new Promise((r) => setTimeout(r, 1000));
  }

  const status = () => runDeploy(['status', '--plan', all], env);
  const warm = await status();
  const marks = JSON.parse((await runDeploy(['status', '--plan', all, '--json'], env)).stdout).targets[0].nodes.map((n: { mark: string }) => n.mark);
  const counts = Object.fromEntries([...new Set<string>(marks)].map((m) => [m, marks.filter((x: string) => x === m).length]));
  if (warm.exitCode !== 7 || marks.length !== NODES || counts.ok !== 1) throw new Error(`unexpected status: exit ${warm.exitCode}, marks ${JSON.stringify(counts)}\n${warm.stdout.slice(0, 2000)}${warm.stderr}`);
  const statusMs: number[] = [];
  const listMs: number[] = [];
  const loads: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    loads.push(loadavg()[0]!);
    const r = await status();
    if (r.exitCode !== 7) throw new Error(`status exit ${r.exitCode}: ${r.stderr}`);
    statusMs.push(r.ms);
    listMs.push((await runDeploy(['state', 'list'], env)).ms);
  }
  const s = spread(statusMs);
  const l = spread(listMs);
  const met = s.median < GOAL_MS;
  const load = spread(loads);
  console.log(`deploy status, ${NODES} nodes (state of ${NODES} nodes, ${NODES} Deployments, ${NODES} pods; marks ${JSON.stringify(counts)}), ${RUNS} runs after one warm-up:`);
  console.log(`  median ${showSecs(s)}   goal < ${GOAL_MS / 1000} s: ${met ? 'met' : 'NOT met'}`);
  console.log(`  for scale, deploy state list on the same backend (Node start, no cluster): ${showSecs(l)}`);
  console.log(`  load average (1 min) during the runs: ${load.min.toFixed(1)}-${load.max.toFixed(1)} on ${process.env.BENCH_CORES ?? 'this host'}`);
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'status.json'),
    `${JSON.stringify({ when: new Date().toISOString(), nodes: NODES, runs: RUNS, marks: counts, statusMs: { ...s, all: statusMs.map(Math.round) }, stateListMs: { ...l, all: listMs.map(Math.round) }, goalMs: GOAL_MS, met, loadAverage: { min: load.min, max: load.max } }, null, 2)}\n`,
  );
} finally {
  kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']);
  rmSync(dir, { recursive: true, force: true });
}

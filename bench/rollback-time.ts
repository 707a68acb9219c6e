// Benchmark of the rollout step's rollback (issue 7), not a test:
//   npm run bench:rollback        (builds first; or: node bench/rollback-time.ts after a build)
// Against the local cluster (`npm run cluster:up`; its cluster.env is read), with the real
// node images (test/cluster/images/build.sh good|broken). One node: deploy good, then N times
// apply the broken image and run the rollout step, which must roll back to good. Measures:
//   evidence -> verdict   the kubelet's `degraded` probe event to the step's verdict
//                         (event times have whole seconds: up to 1 s too long)
//   verdict -> done       evidence read (journal of the failed units) + rollback patch to the
//                         previous pod Ready again (local clock, ms precise)
//   evidence -> done      what the issue's goal is about (two readiness periods = 4 s)
// Writes bench/results/rollback-time.json (summary) and rollback-time.raw.json (all runs).
// Env: BENCH_RUNS (default 5), DEPLOY_STATE_DIR / XDG_STATE_HOME (cluster.env), DEPLOY_CACHE_DIR (src/paths.ts).
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIELD_MANAGER } from '../src/contract/field-managers.ts';
import { CONTAINER_NAME } from '../src/contract/node-container.ts';
import { nodeServiceAccount } from '../src/contract/service-accounts.ts';
import { LABEL_GROUP, LABEL_MANAGED_BY, LABEL_NAME, MANAGED_BY } from '../src/contract/pod-labels.ts';
import { LIVENESS_SCRIPT, READINESS_SCRIPT, STARTUP_SCRIPT } from '../src/contract/probes.ts';
import { buildImage, ensureCluster, kubectl as kubectlOf, root } from './lib/bench-env.ts';
import { pushImage } from './lib/push.ts';
import { percentiles } from './lib/stats.ts';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const cluster = ensureCluster();
const kubectl = (args: string[], input?: string) => kubectlOf(cluster, args, input);

// The node's Deployment as the graph makes it (labels, container, probe scripts of
// src/contract/), with the bench's own probe periods (readiness every 2 s, as measured).
function applyNode(ns: string, name: string, image: string, uuid: string): void {
  const labels = { [LABEL_NAME]: name, [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_GROUP]: 'bench' };
  const items = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: nodeServiceAccount(name), namespace: ns } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-state`, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns, labels },
      spec: {
        replicas: 1, strategy: { type: 'Recreate' }, progressDeadlineSeconds: 120, selector: { matchLabels: { [LABEL_NAME]: name } },
        template: {
          metadata: { labels },
          spec: {
            runtimeClassName: 'systemd', hostUsers: false, serviceAccountName: nodeServiceAccount(name), automountServiceAccountToken: false, terminationGracePeriodSeconds: 30,
            containers: [{
              name: CONTAINER_NAME, image, env: [{ name: 'container', value: 'docker' }, { name: 'container_uuid', value: uuid }],
              volumeMounts: [{ name: 'state', mountPath: '/var/lib' }, { name: 'run', mountPath: '/run' }, { name: 'run-lock', mountPath: '/run/lock' }, { name: 'tmp', mountPath: '/tmp' }],
              readinessProbe: { exec: { command: ['/bin/sh', '-c', READINESS_SCRIPT] }, periodSeconds: 2, failureThreshold: 1 },
              startupProbe: { exec: { command: ['/bin/sh', '-c', STARTUP_SCRIPT] }, periodSeconds: 1, failureThreshold: 120 },
              livenessProbe: { exec: { command: ['/bin/sh', '-c', LIVENESS_SCRIPT] }, periodSeconds: 10, failureThreshold: 3 },
            }],
            volumes: [
              { name: 'state', persistentVolumeClaim: { claimName: `${name}-state` } },
              { name: 'run', emptyDir: { medium: 'Memory' } }, { name: 'run-lock', emptyDir: { medium: 'Memory' } }, { name: 'tmp', emptyDir: { medium: 'Memory' } },
            ],
          },
        },
      },
    },
  ];
  kubectl(['apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

async function main() {
  const { runRollout } = await import(join(root, 'dist/src/rollout/run-rollout.js'));
  const { createKubeApi, loadKubeConfig } = await import(join(root, 'dist/src/kube/kube-api.js'));
  const { resolveKubeconfig } = await import(join(root, 'dist/src/kube/kubeconfig.js'));
  const api = createKubeApi(loadKubeConfig(resolveKubeconfig({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: cluster.KUBE_CONFIG_PATH } })));
  const work = mkdtempSync(join(tmpdir(), 'bench-rollback-'));
  const ns = `bench-rollback-${randomUUID().slice(0, 8)}`;
  const node = 'bench';
  const opts = { namespace: ns, node, timeoutMs: 120_000, rollbackTimeoutMs: 120_000 };
  const signal = new AbortController().signal;
  const raw: unknown[] = [];
  try {
    const good = buildImage('good');
    const broken = buildImage('broken');
    kubectl(['create', 'namespace', ns]);
    const repo = `${cluster.K8S_REGISTRY}/${ns}/node`;
    const goodRef = `${repo}@${await pushImage(cluster, good.archive, `${repo}:${good.tag}`, work)}`;
    const brokenRef = `${repo}@${await pushImage(cluster, broken.archive, `${repo}:${broken.tag}`, work)}`;
    const uuid = randomUUID();
    applyNode(ns, node, goodRef, uuid);
    const first = await runRollout(opts, { api, signal });
    if (first.outcome !== 'ready') throw new Error(`the good image did not become ready: ${first.message}`);
    for (let i = 1; i <= runs; i++) {
      applyNode(ns, node, brokenRef, uuid);
      const r = await runRollout(opts, { api, signal });
      raw.push(r);
      const d = r.durations;
      process.stderr.write(`run ${i}/${runs}: ${r.outcome} (${r.reason}) evidence->verdict ${d.evidenceToVerdictMs} ms, journal ${d.evidenceReadMs} ms, patch->done ${d.rollbackMs} ms, evidence->done ${d.evidenceToRollbackDoneMs} ms\n`);
      if (r.outcome !== 'rolled-back') throw new Error(`run ${i}: expected a rollback, got ${r.outcome}: ${r.message}`);
    }
  } finally {
    try {
      kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
    } catch {
      // the namespace may not exist
    }
    rmSync(work, { recursive: true, force: true });
  }
  const ok = raw as { durations: { waitMs: number; evidenceReadMs: number; rollbackMs: number; evidenceToVerdictMs: number | null; evidenceToRollbackDoneMs: number | null } }[];
  const summary = {
    date: new Date().toISOString(),
    runs: ok.length,
    readinessPeriodSeconds: 2,
    goalMs: 4000,
    note: 'evidence = the kubelet Unhealthy event (systemd: degraded); its timestamp has whole seconds, so evidence->X is up to 1 s too long. verdict->done is measured with the local clock.',
    startToVerdictMs: percentiles(ok.map((r) => r.durations.waitMs)),
    evidenceToVerdictMs: percentiles(ok.flatMap((r) => (r.durations.evidenceToVerdictMs === null ? [] : [r.durations.evidenceToVerdictMs]))),
    evidenceReadMs: percentiles(ok.map((r) => r.durations.evidenceReadMs)),
    verdictToRollbackDoneMs: percentiles(ok.map((r) => r.durations.evidenceReadMs + r.durations.rollbackMs)),
    patchToRollbackDoneMs: percentiles(ok.map((r) => r.durations.rollbackMs)),
    evidenceToRollbackDoneMs: percentiles(ok.flatMap((r) => (r.durations.evidenceToRollbackDoneMs === null ? [] : [r.durations.evidenceToRollbackDoneMs]))),
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/rollback-time.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(root, 'bench/results/rollback-time.raw.json'), `${JSON.stringify(raw, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
}

await main();

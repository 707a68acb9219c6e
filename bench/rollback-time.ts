// Benchmark of the rollout step's rollback (issue 7), not a test:
//   npm run bench:rollback        (builds first; or: node bench/rollback-time.ts after a build)
// Against the local cluster (`npm run cluster:up`; its cluster.env is read), with the real
// node images (test/cluster/images/build.sh good|broken). One node: deploy good, then N times
// apply the broken image and run the rollout step, which must roll back to good. Measures:
//   evidence -> verdict   the kubelet's `degraded` probe event to the step's verdict
//                         (event times have whole seconds: up to 1 s too long)
//   verdict -> done       evidence read (journal of the failed units) + rollback patch to the
//                         previous pod Ready again (local clock, ms precise)
//   evidence -> done      what the goal is about (two readiness periods = 4 s)
// Writes bench/results/rollback-time.json (summary) and rollback-time.raw.json (all runs).
// Env: BENCH_RUNS (default 5), DEPLOY_STATE_DIR / XDG_STATE_HOME (cluster.env), DEPLOY_CACHE_DIR.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.env.BENCH_RUNS ?? 5);
const home = process.env.HOME ?? '';
const stateDir = process.env.DEPLOY_STATE_DIR ?? join(process.env.XDG_STATE_HOME ?? join(home, '.local/state'), 'k8s-deployer');
const cacheDir = process.env.DEPLOY_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(home, '.cache'), 'k8s-deployer');

function readExports(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m?.[1] && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}

const cluster = readExports(join(stateDir, 'cluster', 'cluster.env'));
const kubeconfig = cluster.KUBE_CONFIG_PATH ?? '';
const registry = cluster.K8S_REGISTRY ?? '';
const k8sVersion = /^KUBERNETES_VERSION=(\S+)$/m.exec(readFileSync(join(root, 'toolchain/versions.env'), 'utf8'))?.[1];
const kubectlBin = join(cacheDir, 'kubernetes', k8sVersion ?? '?', 'kubectl');

function kubectl(args: string[], input?: string): string {
  return execFileSync(kubectlBin, ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8', timeout: 120_000 });
}

function buildImage(variant: 'good' | 'broken'): { archive: string; tag: string } {
  const out = execFileSync(join(root, 'test/cluster/images/build.sh'), [variant], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 1_800_000 });
  const kv = Object.fromEntries(out.split('\n').map((l) => /^([A-Z_]+)=(.*)$/.exec(l)).filter((m) => m !== null).map((m) => [m[1], m[2]]));
  return { archive: kv.ARCHIVE!, tag: kv.TAG! };
}

function push(archive: string, repo: string, tag: string, work: string): string {
  const digestFile = join(work, `digest-${tag}`);
  execFileSync('skopeo', ['copy', '--dest-tls-verify=false', '--digestfile', digestFile, `docker-archive:${archive}`, `docker://${registry}/${repo}:${tag}`], { stdio: 'ignore', timeout: 300_000 });
  return `${registry}/${repo}@${readFileSync(digestFile, 'utf8').trim()}`;
}

const READINESS = 'state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; [ "$state" = running ] && exit 0; systemctl --failed --no-legend --plain 2>/dev/null; exit 1';
const STARTUP = 'state=$(systemctl is-system-running 2>/dev/null); echo "systemd: ${state:-unknown}"; case "$state" in running|degraded|maintenance) exit 0;; esac; exit 1';

function applyNode(ns: string, name: string, image: string, uuid: string): void {
  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'deploy', 'deploy.fediversity/group': 'bench' };
  const items = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `node-${name}`, namespace: ns } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-state`, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns, labels },
      spec: {
        replicas: 1, strategy: { type: 'Recreate' }, progressDeadlineSeconds: 120, selector: { matchLabels: { 'app.kubernetes.io/name': name } },
        template: {
          metadata: { labels },
          spec: {
            runtimeClassName: 'systemd', hostUsers: false, serviceAccountName: `node-${name}`, automountServiceAccountToken: false, terminationGracePeriodSeconds: 30,
            containers: [{
              name: 'node', image, env: [{ name: 'container', value: 'docker' }, { name: 'container_uuid', value: uuid }],
              volumeMounts: [{ name: 'state', mountPath: '/var/lib' }, { name: 'run', mountPath: '/run' }, { name: 'run-lock', mountPath: '/run/lock' }, { name: 'tmp', mountPath: '/tmp' }],
              readinessProbe: { exec: { command: ['/bin/sh', '-c', READINESS] }, periodSeconds: 2, failureThreshold: 1 },
              startupProbe: { exec: { command: ['/bin/sh', '-c', STARTUP] }, periodSeconds: 1, failureThreshold: 120 },
              livenessProbe: { exec: { command: ['/bin/sh', '-c', 'systemctl is-system-running; exit 0'] }, periodSeconds: 10, failureThreshold: 3 },
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
  kubectl(['apply', '--server-side', '--field-manager=deploy', '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
  return { n: s.length, min: s[0] ?? Number.NaN, p50: at(50), max: s.at(-1) ?? Number.NaN, mean: Math.round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)) };
}

async function main() {
  const { runRollout } = await import(join(root, 'dist/src/rollout/run-rollout.js'));
  const { createKubeApi, loadKubeConfig } = await import(join(root, 'dist/src/rollout/kube-api.js'));
  const api = createKubeApi(loadKubeConfig({ KUBE_CONFIG_PATH: kubeconfig }));
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
    const goodRef = push(good.archive, `${ns}/node`, good.tag, work);
    const brokenRef = push(broken.archive, `${ns}/node`, broken.tag, work);
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
    startToVerdictMs: stats(ok.map((r) => r.durations.waitMs)),
    evidenceToVerdictMs: stats(ok.flatMap((r) => (r.durations.evidenceToVerdictMs === null ? [] : [r.durations.evidenceToVerdictMs]))),
    evidenceReadMs: stats(ok.map((r) => r.durations.evidenceReadMs)),
    verdictToRollbackDoneMs: stats(ok.map((r) => r.durations.evidenceReadMs + r.durations.rollbackMs)),
    patchToRollbackDoneMs: stats(ok.map((r) => r.durations.rollbackMs)),
    evidenceToRollbackDoneMs: stats(ok.flatMap((r) => (r.durations.evidenceToRollbackDoneMs === null ? [] : [r.durations.evidenceToRollbackDoneMs]))),
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/rollback-time.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(root, 'bench/results/rollback-time.raw.json'), `${JSON.stringify(raw, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
}

await main();

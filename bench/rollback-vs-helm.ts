/**
 * P3: time to roll back a broken configuration after a good one, `deploy apply` against
 * Helm 4's `helm upgrade --rollback-on-failure --timeout <same>` of a chart with the same
 * Deployment (bench/helm-chart). One node per tool, each in a namespace of its own; the runs
 * alternate between the tools. One observer, the same for both, polls the API every 250 ms:
 *   evidence  the first kubelet event "Readiness probe failed: systemd: degraded" of the run
 *   done      the Deployment names the previous (good) image again and its pod is ready
 * and the figure is done - evidence (local clock). Also kept: each command's wall time and
 * what it printed about the cause.
 */
import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { execa } from 'execa';
import { buildImage, kubectl, log, type ClusterEnv } from './lib/bench-env.ts';
import { runDeploy, writePlan } from './lib/deploy-run.ts';
import { chartDir, helmEnv } from './lib/helm-release.ts';
import { writeProbeValues } from './lib/probe-values.ts';
import { pushImage } from './lib/push.ts';
import { spread, type Spread } from './lib/stats.ts';

export interface RollbackOptions {
  cluster: ClusterEnv;
  env: NodeJS.ProcessEnv;
  work: string;
  helm: string;
  deployNamespace: string;
  helmNamespace: string;
  runs: number;
  timeoutSeconds: number;
}

export interface ToolRollback {
  evidenceToReadyMs: Spread;
  commandMs: Spread;
  runs: { evidenceToReadyMs: number; commandMs: number; exitCode: number }[];
  /** what the tool printed about the cause (last run) */
  printed: string;
}

export interface RollbackResults {
  deploy: ToolRollback;
  helm: ToolRollback;
  ratio: number;
  timeoutSeconds: number;
}

const NODE = 'n';
const POLL_MS = 250;

interface Observation {
  evidenceAt: number | undefined;
  doneAt: number | undefined;
}

/** Watches one namespace until the command has exited and the good image is ready again. */
async function observe(api: { core: k8s.CoreV1Api; apps: k8s.AppsV1Api }, namespace: string, goodImage: string, command: Promise<unknown>, deadlineMs: number): Promise<Observation> {
  const seen = new Set((await api.core.listNamespacedEvent({ namespace })).items.map((e) => e.metadata?.uid));
  let exited = false;
  void command.finally(() => {
    exited = true;
  });
  const obs: Observation = { evidenceAt: undefined, doneAt: undefined };
  const stopAt = performance.now() + deadlineMs;
  while (performance.now() < stopAt) {
    const now = performance.now();
    if (obs.evidenceAt === undefined) {
      const events = (await api.core.listNamespacedEvent({ namespace })).items;
      if (events.some((e) => !seen.has(e.metadata?.uid) && e.reason === 'Unhealthy' && (e.message ?? '').includes('systemd: degraded'))) obs.evidenceAt = now;
    } else if (obs.doneAt === undefined) {
      const d = await api.apps.readNamespacedDeployment({ name: NODE, namespace });
      const s = d.status ?? {};
      const image = d.spec?.template.spec?.containers[0]?.image;
      if (image === goodImage && (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) && s.readyReplicas === 1 && s.updatedReplicas === 1 && s.replicas === 1) obs.doneAt = now;
    }
    if (exited && obs.doneAt !== undefined) break;
    if (exited && obs.evidenceAt === undefined && performance.now() > stopAt - deadlineMs / 2) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  await command.catch(() => undefined);
  return obs;
}

function summarize(runs: ToolRollback['runs'], printed: string): ToolRollback {
  return { evidenceToReadyMs: spread(runs.map((r) => r.evidenceToReadyMs)), commandMs: spread(runs.map((r) => r.commandMs)), runs, printed };
}

export async function benchRollback(opts: RollbackOptions): Promise<RollbackResults> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.cluster.KUBE_CONFIG_PATH);
  const api = { core: kc.makeApiClient(k8s.CoreV1Api), apps: kc.makeApiClient(k8s.AppsV1Api) };
  const good = buildImage('good');
  const broken = buildImage('broken');
  const timeout = `${opts.timeoutSeconds}s`;
  const observeFor = (opts.timeoutSeconds + 180) * 1000;

  // deploy: a one-node group; good then broken, each run (the good apply resets the state).
  const denv = { ...opts.env, K8S_NAMESPACE: opts.deployNamespace, DEPLOY_ROLLOUT_TIMEOUT: timeout };
  const goodPlan = writePlan(opts.work, 'rb-good', 'benchrb', { [NODE]: good });
  const brokenPlan = writePlan(opts.work, 'rb-broken', 'benchrb', { [NODE]: broken });

  // helm: the same images pushed by skopeo to the same kind of reference, pinned by digest.
  const repo = `${opts.cluster.K8S_REGISTRY}/${opts.helmNamespace}/${NODE}`;
  const goodHelmImage = `${repo}@${await pushImage(opts.cluster, good.archive, `${repo}:${good.tag}`, opts.work)}`;
  const brokenHelmImage = `${repo}@${await pushImage(opts.cluster, broken.archive, `${repo}:${broken.tag}`, opts.work)}`;
  const machineId = randomUUID();
  const probeValues = writeProbeValues(opts.work);
  const helmArgs = (verb: string, image: string) => [verb, NODE, chartDir, '--namespace', opts.helmNamespace, '--kubeconfig', opts.cluster.KUBE_CONFIG_PATH, '-f', probeValues, '--set', `name=${NODE}`, '--set', `image=${image}`, '--set', `machineId=${machineId}`, '--set', `timeoutSeconds=${opts.timeoutSeconds}`, '--timeout', timeout];
  const env = helmEnv(opts.work);

  log(`rollback: first good deploy of each tool (timeout ${timeout})`);
  const firstDeploy = await runDeploy(['apply', '--plan', goodPlan, '--json'], denv);
  if (firstDeploy.exitCode !== 0) throw new Error(`deploy apply (good) exited ${firstDeploy.exitCode}: ${firstDeploy.stderr.split('\n').slice(-20).join('\n')}`);
  const goodDeployImage = JSON.parse(kubectl(opts.cluster, ['-n', opts.deployNamespace, 'get', 'deployment', NODE, '-o', 'json'])).spec.template.spec.containers[0].image as string;
  const install = await execa(opts.helm, [...helmArgs('install', goodHelmImage), '--create-namespace', '--wait'], { env, extendEnv: false, reject: false, timeout: 600_000 });
  if (install.exitCode !== 0) throw new Error(`helm install exited ${install.exitCode}: ${install.stderr}`);

  const deployRuns: ToolRollback['runs'] = [];
  const helmRuns: ToolRollback['runs'] = [];
  let deployPrinted = '';
  let helmPrinted = '';
  for (let run = 1; run <= opts.runs; run++) {
    for (const tool of run % 2 ? ['deploy', 'helm'] : ['helm', 'deploy']) {
      if (tool === 'deploy') {
        if (run > 1) {
          const reset = await runDeploy(['apply', '--plan', goodPlan, '--json'], denv);
          if (reset.exitCode !== 0) throw new Error(`deploy apply (good again) exited ${reset.exitCode}: ${reset.stderr.split('\n').slice(-20).join('\n')}`);
        }
        const t0 = performance.now();
        const cmd = runDeploy(['apply', '--plan', brokenPlan], denv);
        const obs = await observe(api, opts.deployNamespace, goodDeployImage, cmd, observeFor);
        const r = await cmd;
        const commandMs = performance.now() - t0;
        deployPrinted = `${r.stdout.trim()}`;
        deployRuns.push({ evidenceToReadyMs: obs.evidenceAt !== undefined && obs.doneAt !== undefined ? obs.doneAt - obs.evidenceAt : Number.NaN, commandMs, exitCode: r.exitCode });
        log(`rollback: deploy run ${run}: exit ${r.exitCode}, evidence->ready ${deployRuns.at(-1)!.evidenceToReadyMs.toFixed(0)} ms, command ${(commandMs / 1000).toFixed(1)} s`);
      } else {
        const t0 = performance.now();
        const cmd = execa(opts.helm, [...helmArgs('upgrade', brokenHelmImage), '--rollback-on-failure'], { env, extendEnv: false, reject: false, timeout: (opts.timeoutSeconds + 300) * 1000, all: true });
        const obs = await observe(api, opts.helmNamespace, goodHelmImage, cmd, observeFor);
        const r = await cmd;
        const commandMs = performance.now() - t0;
        helmPrinted = (r.all ?? '').trim();
        helmRuns.push({ evidenceToReadyMs: obs.evidenceAt !== undefined && obs.doneAt !== undefined ? obs.doneAt - obs.evidenceAt : Number.NaN, commandMs, exitCode: r.exitCode ?? -1 });
        log(`rollback: helm run ${run}: exit ${r.exitCode}, evidence->ready ${helmRuns.at(-1)!.evidenceToReadyMs.toFixed(0)} ms, command ${(commandMs / 1000).toFixed(1)} s`);
      }
    }
  }
  const deploy = summarize(deployRuns, deployPrinted);
  const helm = summarize(helmRuns, helmPrinted);
  return { deploy, helm, ratio: deploy.evidenceToReadyMs.median / helm.evidenceToReadyMs.median, timeoutSeconds: opts.timeoutSeconds };
}

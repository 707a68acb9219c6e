/**
 * P1, P6 and the provider levers on a deployed group (bench/fleet.ts brings it up): the same
 * no-op question asked in every way, the variants interleaved round by round (the first
 * round warms caches and is discarded):
 *
 *   deploy          `deploy plan` as operators run it: the verified no-op check answers
 *                   (src/workflow/noop/verdict.ts); each run must say it did (verifiedNoop)
 *   deploy-full     `deploy plan` with DEPLOY_FAST_PLAN=off: the full plan (init, refresh),
 *                   patched kubernetes provider
 *   deploy-stock    the full plan with DEPLOY_PROVIDER_PATCHES=none
 *   tofu-stock      bare `tofu plan` of the same graph and state, stock providers (P1's base)
 *   tofu-p<N>       bare `tofu plan -parallelism=<N>`, patched providers (BENCH_PARALLELISM)
 *   helm            `helm upgrade --dry-run=server` of bench/helm-chart holding the same
 *                   Deployments, claims, service accounts and NetworkPolicy (P6's base)
 *
 * Helm's release lives in a namespace of its own with a ResourceQuota of 0 pods: its objects
 * are the group's (same specs, images pinned by the same digests) but no second set of
 * systemd pods loads the 2 cores; a dry run reads and validates objects, never pods.
 *
 * Then one profile of a no-op `tofu plan -json` per provider build (bench/lib/plan-profile.ts).
 */
import { execa } from 'execa';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, kubectl, log, type ClusterEnv } from './lib/bench-env.ts';
import { runDeploy } from './lib/deploy-run.ts';
import { deploySettings, nodesOfGroup } from './lib/helm-group.ts';
import { createNamespace, HelmRelease } from './lib/helm-release.ts';
import { groupValues } from './lib/helm-values.ts';
import { profilePlan, type PlanProfile } from './lib/plan-profile.ts';
import { rotated, spread, type Spread } from './lib/stats.ts';

export interface NoopPlanOptions {
  cluster: ClusterEnv;
  /** deploy's environment (TF_HTTP_ADDRESS of the bench's backend, K8S_NAMESPACE, ...) */
  env: NodeJS.ProcessEnv;
  work: string;
  /** the group plan that was applied */
  plan: string;
  /** deploy's graph directory of that plan, and its state's address */
  graphDir: string;
  stateAddress: string;
  /** the group's namespace, and the one for Helm's release */
  namespace: string;
  helmNamespace: string;
  helm: string;
  runs: number;
  parallelism: number[];
}

export interface NoopPlanResults {
  variants: Record<string, { ms: Spread; runs: number[] }>;
  /** P1: deploy (patched) / bare tofu plan (stock) */
  p1: number;
  /** P6: deploy (patched) / helm upgrade --dry-run=server */
  p6: number;
  /** the full plan: with the stock provider / with the patched one */
  patchGain: number;
  /** the full plan (DEPLOY_FAST_PLAN=off) / the verified no-op check */
  fastPathGain: number;
  /** P1 and P6 of the full plan, for comparison */
  fullP1: number;
  fullP6: number;
  profiles: { patched: PlanProfile; stock: PlanProfile };
}

export const STOCK = 'tofu.rc';
const PATCHED = 'tofu-patched.rc';

/** What a bare tofu of the group's graph needs: deploy's environment, a work directory, the graph and its state. */
export type BareGraphOptions = Pick<NoopPlanOptions, 'env' | 'work' | 'graphDir' | 'stateAddress'>;

/** A copy of the graph, `tofu init` with the given mirror: a bare tofu of that provider build. */
export async function bareGraph(opts: BareGraphOptions, name: string, rc: string): Promise<string> {
  const dir = join(opts.work, name);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(opts.graphDir, 'cdk.tf.json'), join(dir, 'cdk.tf.json'));
  const r = await execa(opts.env.DEPLOY_TOFU!, ['init', '-input=false', '-no-color', '-reconfigure'], { cwd: dir, env: tofuEnv(opts, rc), extendEnv: false, reject: false, timeout: 600_000 });
  if (r.exitCode !== 0) throw new Error(`tofu init (${rc}) exited ${r.exitCode}: ${r.stderr || r.stdout}`);
  return dir;
}

export function tofuEnv(opts: BareGraphOptions, rc: string): NodeJS.ProcessEnv {
  // the graph's shell steps (digest reads) run `deploy`'s programs as deploy hands them over
  return { ...opts.env, TF_HTTP_ADDRESS: opts.stateAddress, TF_IN_AUTOMATION: '1', TF_CLI_CONFIG_FILE: join(cacheDir, rc) };
}

/**
 * A bare no-op `tofu plan` of a graph made by bareGraph, timed (ms); fails on anything but "no
 * changes" (exit 2 is changes).
 */
export async function bareTofuPlanMs(opts: BareGraphOptions, dir: string, rc: string, extra: string[] = [], timeoutMs = 600_000): Promise<number> {
  const t0 = performance.now();
  const r = await execa(opts.env.DEPLOY_TOFU!, ['plan', '-input=false', '-no-color', '-lock-timeout=60s', '-detailed-exitcode', ...extra], { cwd: dir, env: tofuEnv(opts, rc), extendEnv: false, reject: false, timeout: timeoutMs });
  const ms = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`tofu plan ${extra.join(' ')} (${rc}) exited ${r.exitCode} (2 = changes): ${(r.stderr || r.stdout).split('\n').slice(-20).join('\n')}`);
  return ms;
}

/**
 * P6's release: deploy's group as it is (the same names, images and machine IDs; bench/lib/helm-values.ts),
 * installed once; then each run a server-side dry run of the same values.
 */
async function installHelmRelease(opts: NoopPlanOptions): Promise<{ run: () => Promise<number> }> {
  const ns = opts.helmNamespace;
  createNamespace(opts.cluster, ns);
  kubectl(opts.cluster, ['-n', ns, 'apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } }));
  const values = groupValues(nodesOfGroup(opts.cluster, opts.namespace), await deploySettings('bench', opts.env));
  const release = new HelmRelease({ helm: opts.helm, cluster: opts.cluster, work: opts.work, name: 'fleet', namespace: ns });
  await release.run('install', values);
  return { run: () => release.run('upgrade', values, ['--dry-run=server']) };
}

export async function benchNoopPlan(opts: NoopPlanOptions): Promise<NoopPlanResults> {
  const stockDir = await bareGraph(opts, 'graph-stock', STOCK);
  const patchedDir = await bareGraph(opts, 'graph-patched', PATCHED);
  const helm = await installHelmRelease(opts);
  const bareTofu = (dir: string, rc: string, extra: string[]) => () => bareTofuPlanMs(opts, dir, rc, extra);
  const deployPlan = (env: NodeJS.ProcessEnv, verified: boolean) => async () => {
    const r = await runDeploy(['plan', '--plan', opts.plan, '--json'], env);
    if (r.exitCode !== 0) throw new Error(`deploy plan exited ${r.exitCode}: ${(r.stderr || r.stdout).split('\n').slice(-20).join('\n')}`);
    if (r.json?.targets?.some((t: any) => t.changes)) throw new Error('deploy plan after apply shows changes');
    // the fast variant must have been answered by the check, the full ones by tofu
    const answered = r.json?.targets?.every((t: any) => t.verifiedNoop === true) === true;
    if (answered !== verified) throw new Error(`deploy plan was ${answered ? '' : 'not '}answered by the verified no-op check: ${r.stderr.split('\n').filter((l) => /full plan|verified/.test(l)).join(' / ')}`);
    return r.ms;
  };
  const full = { ...opts.env, DEPLOY_FAST_PLAN: 'off' };
  const variants: [string, () => Promise<number>][] = [
    ['deploy', deployPlan(opts.env, true)],
    ['deploy-full', deployPlan(full, false)],
    // a state directory of its own (the state is the backend's): its graph directory keeps the
    // stock providers' lock, so neither variant re-installs providers at every round
    ['deploy-stock', deployPlan({ ...full, DEPLOY_PROVIDER_PATCHES: 'none', DEPLOY_STATE_DIR: join(opts.work, 'state-stock') }, false)],
    ['tofu-stock', bareTofu(stockDir, STOCK, [])],
    ...opts.parallelism.map((p): [string, () => Promise<number>] => [`tofu-p${p}`, bareTofu(patchedDir, PATCHED, [`-parallelism=${p}`])]),
    ['helm', helm.run],
  ];
  const measured = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round <= opts.runs; round++) {
    // each round in another order, so that no variant always follows the same one
    for (const [name, run] of rotated(variants, round)) {
      const ms = await run();
      if (round > 0) measured.get(name)!.push(ms);
      log(`no-op plan: ${name} ${(ms / 1000).toFixed(2)} s${round === 0 ? ' (warm-up)' : ''}`);
    }
  }
  const out: NoopPlanResults['variants'] = {};
  for (const [name, runs] of measured) out[name] = { ms: spread(runs), runs };
  const m = (name: string) => out[name]!.ms.median;
  log('no-op plan: profiles (tofu plan -json, processes, CPU)');
  const profiles = {
    patched: await profilePlan(opts.env.DEPLOY_TOFU!, patchedDir, tofuEnv(opts, PATCHED)),
    stock: await profilePlan(opts.env.DEPLOY_TOFU!, stockDir, tofuEnv(opts, STOCK)),
  };
  return {
    variants: out,
    p1: m('deploy') / m('tofu-stock'),
    p6: m('deploy') / m('helm'),
    patchGain: m('deploy-stock') / m('deploy-full'),
    fastPathGain: m('deploy-full') / m('deploy'),
    fullP1: m('deploy-full') / m('tofu-stock'),
    fullP6: m('deploy-full') / m('helm'),
    profiles,
  };
}

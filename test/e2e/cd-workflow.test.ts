/**
 * The CD workflow (.forgejo/workflows/cd.yml) run for real by act v0.2.89 on this host
 * (`-P ubuntu-latest=-self-hosted`), against the local cluster the e2e global setup brought up
 * and a `deploy state serve` on loopback as the shared state backend (TF_HTTP_ADDRESS,
 * TF_HTTP_USERNAME and the secret TF_HTTP_PASSWORD): check out (act copies the work tree),
 * `npm ci`, toolchain, the cd-env.sh k8s profile with fake secrets (the real kubeconfig as
 * KUBE_CONFIG, a made-up registry credential as REGISTRY_AUTH; the loopback registry has no
 * auth and ignores it), `deploy plan`, `deploy apply`, the release of the run's state locks
 * and the cleanup step. Every run has a home and a RUNNER_TEMP of its own, as a fresh runner.
 *
 * 1. The example group (examples/demo.json with the good node image, target all) deploys:
 *    the job is green, every node's Deployment is ready, the secret files were 0600 and are
 *    gone after the job, no secret value appears in the job's output, no lock is left.
 * 2. A second run (fresh home, fresh RUNNER_TEMP) changes nothing: same pods, same machine IDs.
 * 3. The same workflow without TF_HTTP_ADDRESS fails in the plan step with exit 2 naming it.
 * 4. A job cancelled (SIGINT to act, as a cancel) while the apply waits in the rollout step:
 *    the run's lock (Who = its DEPLOY_RUN_ID) is held at that moment; the workflow's
 *    `always()` step releases it; no lock is left; the next run proceeds and is green.
 * 5. The same group with mail's image switched to the broken one: the rollout fails and is
 *    rolled back, the job fails with the rollout's exit code (4), and the summary says so;
 *    mail still runs the good image.
 *
 * act runs with a minimal environment (no KUBE_CONFIG_PATH or K8S_REGISTRY of this process),
 * so the coordinates reach deploy only through cd-env.sh and the runner's env file.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildImage, parseKeyValues, type BuiltImage } from '../integration/images-scripts.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../support/state-server.js';
import { cacheDir } from '../../src/paths.js';
import { VERSIONS } from '../../src/tools/versions.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const env = inject('clusterEnv');
const registry = env.K8S_REGISTRY ?? '';
const stamp = randomUUID().slice(0, 8);
const ns = `cd-e2e-${stamp}`;
// examples/demo.json: nodes web (app web) and mail (app mail); the workflow deploys the
// target `all` (input target=all): one pod per node in the namespace K8S_NAMESPACE.
const deployments: [target: string, namespace: string, name: string][] = [
  ['all', ns, 'mail'],
  ['all', ns, 'web'],
];
const fakeRegistrySecret = `fake-${randomUUID()}`;
const registryAuthToken = Buffer.from(`ci:${fakeRegistrySecret}`).toString('base64');
// the shared state backend's credentials (the password is a secret of the workflow)
const stateUser = 'cd';
const statePassword = `state-${randomUUID()}`;
const home = process.env.HOME ?? '/root';
let runNumber = 100;
let stateServer: ServerProcess;

let work: string;
let actBin: string;
let kubectlBin: string;
let kubeConfig: string;
let good: BuiltImage;
let broken: BuiltImage;

async function kubectlPath(): Promise<string> {
  return join(cacheDir(), 'kubernetes', VERSIONS.KUBERNETES_VERSION ?? '', 'kubectl');
}

async function kubectlJson<T>(args: string[]): Promise<T> {
  const r = await execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', ...args, '-o', 'json'], { timeout: 60_000 });
  return JSON.parse(r.stdout) as T;
}

interface Deployment {
  status: { readyReplicas?: number; updatedReplicas?: number };
  spec: { template: { spec: { containers: { image: string; env?: { name: string; value: string }[] }[] } } };
}

/** The group plan of one run: demo.json with the good image, mail's optionally broken. */
async function writePlan(name: string, mailBroken: boolean): Promise<string> {
  const plan = JSON.parse(await readFile(`${repoRoot}examples/demo.json`, 'utf8')) as {
    nodes: Record<string, { image: { archive: string; tag: string } }>;
  };
  for (const [node, n] of Object.entries(plan.nodes)) {
    const img = node === 'mail' && mailBroken ? broken : good;
    n.image = { archive: img === good ? 'images/node-good.tar' : 'images/node-broken.tar', tag: img.tag };
  }
  const file = join(work, name);
  await writeFile(file, `${JSON.stringify(plan, null, 2)}\n`);
  return file;
}

/** dotenv (act --secret-file): double-quoted, with \n escapes. */
function dotenvValue(v: string): string {
  if (/[\\$]/.test(v)) throw new Error('a secret with a backslash or $ needs more escaping than this test does');
  return `"${v.replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

interface ActRun {
  exitCode: number;
  output: string;
  actDir: string;
  /** The DEPLOY_RUN_ID the job's locks carry. */
  runId: string;
}

interface WorkflowOptions {
  /** Without the shared backend's variables (TF_HTTP_ADDRESS, TF_HTTP_USERNAME). */
  readonly noBackend?: boolean;
  /** Extra job environment (act --env). */
  readonly env?: Record<string, string>;
  /** Called with the output so far, as it grows; may cancel the job with `cancel()`. */
  readonly watch?: (output: string, cancel: () => void) => void;
}

/**
 * Runs the CD workflow once (workflow_dispatch, target all) with act, with a new home and a
 * new RUNNER_TEMP, as on a fresh runner; output is stdout + stderr.
 */
async function runWorkflow(planFile: string, label: string, opts: WorkflowOptions = {}): Promise<ActRun> {
  const actDir = join(work, `act-${label}`);
  const runHome = join(work, `home-${label}`);
  await mkdir(runHome, { recursive: true });
  const secrets = join(work, 'secrets.env');
  await writeFile(
    secrets,
    `KUBE_CONFIG=${dotenvValue(kubeConfig)}\nREGISTRY_AUTH=${dotenvValue(JSON.stringify({ auths: { [registry]: { auth: registryAuthToken } } }))}\nTF_HTTP_PASSWORD=${dotenvValue(statePassword)}\n`,
    { mode: 0o600 },
  );
  // A minimal environment: what a runner host has, nothing of the cluster's coordinates, and
  // no node_modules/.bin or npm's Node 24 of this checkout on PATH (npm run/npx put them
  // there; with them, npm ci in the job took minutes instead of seconds). A fresh home: the
  // embedded backend's default data directory would be new and empty; only the caches of
  // built programs and packages are shared, as a runner's tool cache would be.
  const path = (process.env.PATH ?? '/usr/bin:/bin').split(':').filter((p) => p !== '' && !p.includes('/node_modules/')).join(':');
  const actEnv: Record<string, string> = {
    PATH: path,
    HOME: runHome,
    LANG: 'C.UTF-8',
    DEPLOY_CACHE_DIR: cacheDir(),
    npm_config_cache: process.env.npm_config_cache || `${home}/.npm`,
    GOPATH: process.env.GOPATH || `${home}/go`,
    GOMODCACHE: process.env.GOMODCACHE || `${process.env.GOPATH || `${home}/go`}/pkg/mod`,
    GOCACHE: process.env.GOCACHE || `${process.env.XDG_CACHE_HOME || `${home}/.cache`}/go-build`,
  };
  const runId = String(++runNumber);
  const backendVars = opts.noBackend ? [] : ['--var', `TF_HTTP_ADDRESS=${stateServer.url}`, '--var', `TF_HTTP_USERNAME=${stateUser}`];
  const extraEnv = Object.entries(opts.env ?? {}).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const child = execa(
    actBin,
    [
      'workflow_dispatch',
      '-W', '.forgejo/workflows/cd.yml',
      '-P', 'ubuntu-latest=-self-hosted',
      '--no-cache-server',
      '--pull=false',
      '--action-offline-mode',
      '--action-cache-path', actDir,
      '--secret-file', secrets,
      '--input', 'target=all',
      '--env', `GITHUB_RUN_ID=${runId}`,
      ...extraEnv,
      '--var', `K8S_REGISTRY=${registry}`,
      '--var', `K8S_NAMESPACE=${ns}`,
      '--var', 'K8S_REGISTRY_TLS_VERIFY=false',
      '--var', `DEPLOY_PLAN=${planFile}`,
      ...backendVars,
    ],
    { cwd: repoRoot, env: actEnv, extendEnv: false, reject: false, all: true, timeout: 1_200_000 },
  );
  let output = '';
  child.all?.on('data', (d: Buffer) => {
    output += String(d);
    opts.watch?.(output, () => child.kill('SIGINT'));
  });
  const r = await child;
  await rm(secrets, { force: true });
  await writeFile(join(work, `act-${label}.log`), r.all ?? '');
  // the run id as the workflow makes it: "cd <repository> run <run id>.<attempt>"
  const who = new RegExp(`cd \\S* run ${runId}\\.1`).exec(r.all ?? '')?.[0] ?? `(run ${runId} not named in the log)`;
  return { exitCode: r.exitCode ?? -1, output: r.all ?? '', actDir, runId: who };
}

/** The processes whose HOME is `dir` (what a job with that home left running): pid -> command line. */
async function processesWithHome(dir: string): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    if (!environ.split('\0').includes(`HOME=${dir}`)) continue;
    found.set(Number(pid), (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' '));
  }
  return found;
}

/** The locks the shared backend holds now: key -> Who. */
async function locksOnServer(): Promise<Record<string, string>> {
  const res = await fetch(`${stateServer.url}/_deploy/v1/states`, {
    headers: { Authorization: `Basic ${Buffer.from(`${stateUser}:${statePassword}`).toString('base64')}` },
    signal: AbortSignal.timeout(10_000),
  });
  const states = (await res.json()) as { key: string; lock?: { Who?: string } }[];
  return Object.fromEntries(states.filter((s) => s.lock).map((s) => [s.key, s.lock!.Who ?? '']));
}

/** Per node of the `all` target: the pod's UID and the machine ID (container_uuid) its Deployment gives it. */
async function nodeIdentities(): Promise<Record<string, { pod: string; machineId: string }>> {
  const out: Record<string, { pod: string; machineId: string }> = {};
  for (const [, namespace, name] of deployments) {
    const d = await kubectlJson<Deployment>(['-n', namespace, 'get', 'deployment', name]);
    const machineId = d.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'container_uuid')?.value ?? '';
    const pods = await kubectlJson<{ items: { metadata: { uid: string; deletionTimestamp?: string } }[] }>(['-n', namespace, 'get', 'pods', '-l', `app.kubernetes.io/name=${name}`]);
    out[name] = { pod: pods.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.uid).join(','), machineId };
  }
  return out;
}

/** Every RUNNER_TEMP act made (<action-cache-path>/<hash>/tmp) and what is left in it. */
async function leftInRunnerTemps(actDir: string): Promise<string[]> {
  const left: string[] = [];
  for (const d of existsSync(actDir) ? await readdir(actDir) : []) {
    const temp = join(actDir, d, 'tmp');
    if (!existsSync(temp)) continue;
    for (const f of await readdir(temp, { recursive: true })) left.push(join(temp, String(f)));
  }
  return left;
}

function expectNoSecretIn(output: string) {
  expect(output).not.toContain(fakeRegistrySecret);
  expect(output).not.toContain(registryAuthToken);
  expect(output).not.toContain(statePassword);
  // Every long line of the kubeconfig (certificates, keys, tokens) stays out of the log.
  for (const line of kubeConfig.split('\n')) {
    const value = line.replace(/^\s*[\w-]+:\s*/, '').trim();
    if (value.length >= 24) expect(output, 'a kubeconfig value is in the job output').not.toContain(value);
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cd-workflow-'));
  ensureBuilt();
  stateServer = await startServerProcess(join(work, 'shared-state'), { DEPLOY_STATE_USERNAME: stateUser, DEPLOY_STATE_PASSWORD: statePassword });
  const built = await execa('bash', [`${repoRoot}toolchain/cd/build.sh`, 'act'], { stderr: 'inherit', timeout: 900_000 });
  actBin = parseKeyValues(built.stdout).ACT ?? '';
  // The workflow's toolchain step runs `npm run tools`, which then only finds what is built.
  await execa('bash', [`${repoRoot}toolchain/build-tools.sh`], { stdout: 'ignore', stderr: 'inherit', timeout: 1_800_000 });
  good = await buildImage('good');
  broken = await buildImage('broken');
  await mkdir(join(work, 'images'));
  await symlink(good.archive, join(work, 'images/node-good.tar'));
  await symlink(broken.archive, join(work, 'images/node-broken.tar'));
  kubectlBin = await kubectlPath();
  kubeConfig = await readFile(env.KUBE_CONFIG_PATH ?? '', 'utf8');
}, 3_600_000);

afterAll(async () => {
  await stateServer?.stop();
  if (kubectlBin) {
    await execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', 'delete', 'namespace', ns, `${ns}-web`, `${ns}-mail`, '--wait=false', '--ignore-not-found'], {
      reject: false,
      timeout: 60_000,
    });
  }
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the CD workflow under act', () => {
  let firstImages: Map<string, string>;
  let firstIdentities: Record<string, { pod: string; machineId: string }>;
  let goodPlan: string;

  it('deploys the example group: job green, every node ready, secret files 0600 and gone, no secret in the output, no lock left', { timeout: 1_200_000 }, async () => {
    goodPlan = await writePlan('group.json', false);
    const run = await runWorkflow(goodPlan, 'good');
    expect(run.exitCode, `act failed; log in ${work}/act-good.log:\n${run.output.slice(-4000)}`).toBe(0);
    expect(run.output).toContain('Job succeeded');
    // The steps ran: profile, plan, apply, lock release, cleanup.
    expect(run.output).toMatch(/600 \S+\/deploy-secrets\/kubeconfig/);
    expect(run.output).toMatch(/600 \S+\/deploy-secrets\/registry-auth\.json/);
    expect(run.output).toContain('### deploy plan: exit 0 (success)');
    expect(run.output).toContain('### deploy apply: exit 0 (success)');
    expect(run.output).toContain(`no lock held by ${run.runId}`);
    expect(run.output).toContain('cleanup: removed the secret files');
    for (const [target, namespace, node] of deployments) {
      expect(run.output).toMatch(new RegExp(`\\| ${target} \\| ${namespace} \\| ${node} \\| [^|]+ \\| ready: `));
    }
    expect(await leftInRunnerTemps(run.actDir)).toEqual([]);
    expectNoSecretIn(run.output);
    expect(await locksOnServer()).toEqual({});

    firstImages = new Map();
    for (const [, namespace, name] of deployments) {
      const d = await kubectlJson<Deployment>(['-n', namespace, 'get', 'deployment', name]);
      expect(d.status.readyReplicas, `${namespace}/${name}`).toBe(1);
      const image = d.spec.template.spec.containers[0]?.image ?? '';
      expect(image).toMatch(new RegExp(`^${registry.replace(/[.]/g, '\\.')}/${namespace}/${name}@sha256:[0-9a-f]{64}$`));
      firstImages.set(`${namespace}/${name}`, image);
    }
    firstIdentities = await nodeIdentities();
    for (const [node, id] of Object.entries(firstIdentities)) {
      expect(id.machineId, node).toMatch(/^[0-9a-f-]{36}$/);
      expect(id.pod, node).not.toContain(',');
    }
  });

  it('a second run on a fresh runner (new home, new RUNNER_TEMP) changes nothing: same pods, same machine IDs', { timeout: 1_200_000 }, async () => {
    expect(firstIdentities, 'needs the first run').toBeDefined();
    const run = await runWorkflow(goodPlan, 'again');
    expect(run.exitCode, `act failed; log in ${work}/act-again.log:\n${run.output.slice(-4000)}`).toBe(0);
    expect(run.output).toContain('### deploy plan: exit 0 (success)');
    for (const [target, namespace, node] of deployments) {
      expect(run.output).toMatch(new RegExp(`\\| ${target} \\| ${namespace} \\| ${node} \\| no change \\| `));
    }
    expect(run.output).not.toMatch(/\| ready: /);
    expect(await nodeIdentities()).toEqual(firstIdentities);
    expect(await locksOnServer()).toEqual({});
  });

  it('without TF_HTTP_ADDRESS the plan step fails with exit 2 naming it, and nothing is deployed', { timeout: 1_200_000 }, async () => {
    const run = await runWorkflow(goodPlan, 'no-backend', { noBackend: true });
    expect(run.exitCode).not.toBe(0);
    expect(run.output).toContain('### deploy plan: exit 2 (bad input');
    expect(run.output).toContain('TF_HTTP_ADDRESS');
    expect(run.output).toContain('::error::deploy plan exited with code 2');
    expect(run.output).not.toContain('### deploy apply');
    expect(run.output).toContain('cleanup: removed the secret files');
    expect(await nodeIdentities()).toEqual(firstIdentities);
  });

  it('a job cancelled while the apply waits in the rollout step leaves no lock; the next run proceeds', { timeout: 1_800_000 }, async () => {
    expect(firstIdentities, 'needs the first run').toBeDefined();
    // a RuntimeClass whose handler the node lacks: the new pods never start, so the rollout
    // step is still waiting when the job is cancelled
    const bogus = `cd-cancel-${stamp}`;
    await execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', 'apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: bogus }, handler: 'no-such-handler' }),
      timeout: 60_000,
    });
    try {
      let heldAtCancel: Record<string, string> | undefined;
      let cancelling = false;
      const run = await runWorkflow(goodPlan, 'cancel', {
        env: { K8S_RUNTIME_CLASS: bogus, DEPLOY_ROLLOUT_TIMEOUT: '600s' },
        watch: (output, cancel) => {
          // the view's plain line of a node's rollout step inside its wait for the pod: the
          // step's first progress line gives it its phase (`waiting for the pod: creating`);
          // `waiting for the pod` alone is said when tofu starts the step (run-rows.ts)
          if (cancelling || !/\[all\] (web|mail): waiting for the pod: /.test(output)) return;
          cancelling = true;
          // then the lock, then the cancel (act's Ctrl-C)
          void locksOnServer().then(
            (locks) => {
              heldAtCancel = locks;
              cancel();
            },
            () => cancel(),
          );
        },
      });
      expect(cancelling, `no rollout step said it waits for the pod; log in ${work}/act-cancel.log`).toBe(true);
      expect(heldAtCancel, 'the lock while the rollout step waited').toEqual({ [`demo-all`]: run.runId });
      expect(run.exitCode).not.toBe(0);
      // the lock was released: by deploy itself as it stopped on the cancel's SIGHUP, or by the
      // always() step, whichever came first (both name the run's ID)
      expect(run.output).toMatch(new RegExp(`released lock [^\\n]*held by ${escapeRegExp(run.runId)}|no lock held by ${escapeRegExp(run.runId)} in `));
      expect(await locksOnServer()).toEqual({});
      // nothing of the cancelled job that could write state or touch the cluster keeps running
      // to race the next run: not deploy, its rollout step, or tofu (a provider plugin of the
      // killed tofu is left idle on a host runner: nobody talks to it; see docs/cd-and-nix.md)
      const running = async () => [...(await processesWithHome(join(work, 'home-cancel'))).values()].filter((c) => !/\/terraform-provider-[a-z]+_v/.test(c));
      const deadline = Date.now() + 90_000;
      let left = await running();
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 2_000));
        left = await running();
      }
      expect(left, 'processes of the cancelled job still running 90 s after it ended').toEqual([]);
    } finally {
      // what the cancelled job left (this test's own processes, by PID): not for the next test
      for (const pid of (await processesWithHome(join(work, 'home-cancel'))).keys()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      await execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', 'delete', 'runtimeclass', bogus, '--ignore-not-found'], { reject: false, timeout: 60_000 });
    }

    const next = await runWorkflow(goodPlan, 'after-cancel');
    expect(next.exitCode, `act failed; log in ${work}/act-after-cancel.log:\n${next.output.slice(-4000)}`).toBe(0);
    expect(next.output).toContain('### deploy apply: exit 0 (success)');
    for (const [, namespace, name] of deployments) {
      const d = await kubectlJson<Deployment>(['-n', namespace, 'get', 'deployment', name]);
      expect(d.status.readyReplicas, `${namespace}/${name}`).toBe(1);
      expect(d.spec.template.spec.containers[0]?.image).toBe(firstImages.get(`${namespace}/${name}`));
    }
    const ids = await nodeIdentities();
    for (const [node, id] of Object.entries(firstIdentities)) expect(ids[node]?.machineId, node).toBe(id.machineId);
    expect(await locksOnServer()).toEqual({});
  });

  it('a broken node fails the job with the rollout exit code (4) and the summary names it; the node keeps the good image', { timeout: 1_200_000 }, async () => {
    expect(firstImages, 'needs the first run').toBeDefined();
    const run = await runWorkflow(await writePlan('group-broken.json', true), 'broken');
    expect(run.exitCode).not.toBe(0);
    expect(run.output).toContain('Job failed');
    expect(run.output).toContain('### deploy apply: exit 4 (a rollout failed and the Deployment was set back to the previous image)');
    expect(run.output).toMatch(/\| all \| \S+ \| mail \| [^|]+ \| rolled-back: [^|]*broken\.service/);
    // issue 21: without a terminal, plain lines with the nodes' names; no CDKTF construct ID
    // (`node-mail_rollout_0A1B2C3D`), not even in the failed rollout step's error
    expect(run.output).not.toMatch(/[a-z0-9-]+_[a-z-]+_[0-9A-F]{8}\b/);
    expect(run.output).toContain('::error::deploy apply exited with code 4');
    expect(run.output).toMatch(/exit(code '4'| status 4)/);
    expect(run.output).toContain('cleanup: removed the secret files');
    expect(await leftInRunnerTemps(run.actDir)).toEqual([]);
    expectNoSecretIn(run.output);
    expect(await locksOnServer()).toEqual({});
    const mail = await kubectlJson<Deployment>(['-n', ns, 'get', 'deployment', 'mail']);
    expect(mail.spec.template.spec.containers[0]?.image).toBe(firstImages.get(`${ns}/mail`));
    expect(mail.status.readyReplicas).toBe(1);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

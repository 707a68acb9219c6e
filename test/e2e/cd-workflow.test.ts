/**
 * The CD workflow (.forgejo/workflows/cd.yml) run for real by act v0.2.89 on this host
 * (`-P ubuntu-latest=-self-hosted`), against the local cluster the e2e global setup brought up:
 * check out (act copies the work tree), `npm ci`, toolchain, the cd-env.sh k8s profile with
 * fake secrets (the real kubeconfig as KUBE_CONFIG, a made-up registry credential as
 * REGISTRY_AUTH; the loopback registry has no auth and ignores it), `deploy plan`,
 * `deploy apply`, and the cleanup step.
 *
 * 1. The example group (examples/demo.json with the good node image) deploys: the job is
 *    green, every node's Deployment is ready in its namespace, the secret files were 0600 and
 *    are gone after the job, and no secret value appears in the job's output.
 * 2. The same group with mail's image switched to the broken one: the rollout fails and is
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

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const env = inject('clusterEnv');
const registry = env.K8S_REGISTRY ?? '';
const stamp = randomUUID().slice(0, 8);
const ns = `cd-e2e-${stamp}`;
// examples/demo.json: nodes web (app web) and mail (app mail): targets all, web and mail.
const deployments: [target: string, namespace: string, name: string][] = [
  ['all', ns, 'mail'],
  ['all', ns, 'web'],
  ['mail', `${ns}-mail`, 'mail'],
  ['web', `${ns}-web`, 'web'],
];
const fakeRegistrySecret = `fake-${randomUUID()}`;
const registryAuthToken = Buffer.from(`ci:${fakeRegistrySecret}`).toString('base64');

let work: string;
let actBin: string;
let kubectlBin: string;
let kubeConfig: string;
let good: BuiltImage;
let broken: BuiltImage;

async function kubectlPath(): Promise<string> {
  const versions = await readFile(`${repoRoot}toolchain/cluster/versions.sh`, 'utf8');
  const v = /^KUBERNETES_VERSION=(\S+)$/m.exec(versions)?.[1];
  const cache = process.env.DEPLOY_CACHE_DIR ?? `${process.env.XDG_CACHE_HOME ?? `${process.env.HOME ?? ''}/.cache`}/k8s-deployer`;
  return `${cache}/kubernetes/${v}/kubectl`;
}

async function kubectlJson<T>(args: string[]): Promise<T> {
  const r = await execa(kubectlBin, ['--kubeconfig', env.KUBE_CONFIG_PATH ?? '', ...args, '-o', 'json'], { timeout: 60_000 });
  return JSON.parse(r.stdout) as T;
}

interface Deployment {
  status: { readyReplicas?: number; updatedReplicas?: number };
  spec: { template: { spec: { containers: { image: string }[] } } };
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
}

/** Runs the CD workflow once (workflow_dispatch) with act; output is stdout + stderr. */
async function runWorkflow(planFile: string, label: string): Promise<ActRun> {
  const actDir = join(work, `act-${label}`);
  const secrets = join(work, 'secrets.env');
  await writeFile(
    secrets,
    `KUBE_CONFIG=${dotenvValue(kubeConfig)}\nREGISTRY_AUTH=${dotenvValue(JSON.stringify({ auths: { [registry]: { auth: registryAuthToken } } }))}\n`,
    { mode: 0o600 },
  );
  // A minimal environment: what a runner host has, nothing of the cluster's coordinates, and
  // no node_modules/.bin or npm's Node 24 of this checkout on PATH (npm run/npx put them
  // there; with them, npm ci in the job took minutes instead of seconds).
  const path = (process.env.PATH ?? '/usr/bin:/bin').split(':').filter((p) => p !== '' && !p.includes('/node_modules/')).join(':');
  const actEnv: Record<string, string> = {
    PATH: path,
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    DEPLOY_STATE_DIR: join(work, 'state'),
  };
  for (const k of ['DEPLOY_CACHE_DIR', 'XDG_CACHE_HOME', 'GOPATH', 'GOMODCACHE', 'GOCACHE', 'npm_config_cache']) {
    const v = process.env[k];
    if (v) actEnv[k] = v;
  }
  const r = await execa(
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
      '--var', `K8S_REGISTRY=${registry}`,
      '--var', `K8S_NAMESPACE=${ns}`,
      '--var', 'K8S_REGISTRY_TLS_VERIFY=false',
      '--var', `DEPLOY_PLAN=${planFile}`,
    ],
    { cwd: repoRoot, env: actEnv, extendEnv: false, reject: false, all: true, timeout: 1_200_000 },
  );
  await rm(secrets, { force: true });
  await writeFile(join(work, `act-${label}.log`), r.all ?? '');
  return { exitCode: r.exitCode ?? -1, output: r.all ?? '', actDir };
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
  // Every long line of the kubeconfig (certificates, keys, tokens) stays out of the log.
  for (const line of kubeConfig.split('\n')) {
    const value = line.replace(/^\s*[\w-]+:\s*/, '').trim();
    if (value.length >= 24) expect(output, 'a kubeconfig value is in the job output').not.toContain(value);
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cd-workflow-'));
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

  it('deploys the example group: job green, every node ready, secret files 0600 and gone, no secret in the output', { timeout: 1_200_000 }, async () => {
    const run = await runWorkflow(await writePlan('group.json', false), 'good');
    expect(run.exitCode, `act failed; log in ${work}/act-good.log:\n${run.output.slice(-4000)}`).toBe(0);
    expect(run.output).toContain('Job succeeded');
    // The steps ran: profile, plan, apply, cleanup.
    expect(run.output).toMatch(/600 \S+\/deploy-secrets\/kubeconfig/);
    expect(run.output).toMatch(/600 \S+\/deploy-secrets\/registry-auth\.json/);
    expect(run.output).toContain('### deploy plan: exit 0 (success)');
    expect(run.output).toContain('### deploy apply: exit 0 (success)');
    expect(run.output).toContain('cleanup: removed the secret files');
    for (const [target, namespace, node] of deployments) {
      expect(run.output).toMatch(new RegExp(`\\| ${target} \\| ${namespace} \\| ${node} \\| [^|]+ \\| ready: `));
    }
    expect(await leftInRunnerTemps(run.actDir)).toEqual([]);
    expectNoSecretIn(run.output);

    firstImages = new Map();
    for (const [, namespace, name] of deployments) {
      const d = await kubectlJson<Deployment>(['-n', namespace, 'get', 'deployment', name]);
      expect(d.status.readyReplicas, `${namespace}/${name}`).toBe(1);
      const image = d.spec.template.spec.containers[0]?.image ?? '';
      expect(image).toMatch(new RegExp(`^${registry.replace(/[.]/g, '\\.')}/${namespace}/${name}@sha256:[0-9a-f]{64}$`));
      firstImages.set(`${namespace}/${name}`, image);
    }
  });

  it('a broken node fails the job with the rollout exit code (4) and the summary names it; the node keeps the good image', { timeout: 1_200_000 }, async () => {
    expect(firstImages, 'needs the first run').toBeDefined();
    const run = await runWorkflow(await writePlan('group-broken.json', true), 'broken');
    expect(run.exitCode).not.toBe(0);
    expect(run.output).toContain('Job failed');
    expect(run.output).toContain('### deploy apply: exit 4 (a rollout failed and the Deployment was set back to the previous image)');
    expect(run.output).toMatch(/\| all \| \S+ \| mail \| [^|]+ \| rolled-back: [^|]*broken\.service/);
    expect(run.output).toContain('::error::deploy apply exited with code 4');
    expect(run.output).toMatch(/exit(code '4'| status 4)/);
    expect(run.output).toContain('cleanup: removed the secret files');
    expect(await leftInRunnerTemps(run.actDir)).toEqual([]);
    expectNoSecretIn(run.output);
    const mail = await kubectlJson<Deployment>(['-n', ns, 'get', 'deployment', 'mail']);
    expect(mail.spec.template.spec.containers[0]?.image).toBe(firstImages.get(`${ns}/mail`));
    expect(mail.status.readyReplicas).toBe(1);
  });
});

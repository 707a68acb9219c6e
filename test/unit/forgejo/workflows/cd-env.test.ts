/**
 * .forgejo/workflows/cd-env.sh, sourced by bash the way a workflow step does
 * (`bash -e`, the runner's default), with RUNNER_TEMP and GITHUB_ENV of a temporary runner.
 */
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../../../.forgejo/workflows/cd-env.sh', import.meta.url));

const KUBE_CONFIG = 'apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: kube-secret-7f3a9c01\n';
const REGISTRY_AUTH = '{"auths":{"registry.test:5000":{"auth":"Y2k6cmVnLXNlY3JldC1iODJkNGU="}}}';
const SECRET_MARKERS = ['kube-secret-7f3a9c01', 'Y2k6cmVnLXNlY3JldC1iODJkNGU=', 'apiVersion: v1'];

let runner: string;
let runnerTemp: string;
let envFile: string;

beforeEach(async () => {
  runner = await mkdtemp(join(tmpdir(), 'cd-env-'));
  runnerTemp = join(runner, 'temp');
  envFile = join(runner, 'env');
  await execa('mkdir', ['-p', runnerTemp]);
  await writeFile(envFile, '');
});
afterEach(async () => {
  await rm(runner, { recursive: true, force: true });
});

/** Runs `bash -ec "<body>"` with a clean environment plus `env`. */
async function step(body: string, env: Record<string, string | undefined>) {
  const clean: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: runner, RUNNER_TEMP: runnerTemp, GITHUB_ENV: envFile };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  return execa('bash', ['-ec', body], { env: clean, extendEnv: false, reject: false, timeout: 20_000, cwd: runner });
}

const ALL = { KUBE_CONFIG, REGISTRY_AUTH, K8S_REGISTRY: 'registry.test:5000' };

function expectNoSecret(text: string) {
  for (const m of SECRET_MARKERS) expect(text).not.toContain(m);
}

describe('cd-env.sh k8s', () => {
  it.each([
    ['KUBE_CONFIG', /secret KUBE_CONFIG is missing/],
    ['REGISTRY_AUTH', /secret REGISTRY_AUTH is missing/],
    ['K8S_REGISTRY', /variable K8S_REGISTRY is missing/],
  ])('names the missing %s on its own line, exits 2 and writes nothing', async (name, message) => {
    const r = await step(`. ${script} k8s; echo reached`, { ...ALL, [name]: '' });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).not.toContain('reached');
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('cd-env:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(await readdir(runnerTemp)).toEqual([]);
    expect(await readFile(envFile, 'utf8')).toBe('');
    expectNoSecret(r.stdout + r.stderr);
  });

  it('reports every missing one at once', async () => {
    const r = await step(`. ${script} k8s`, {});
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('cd-env:'));
    expect(lines.map((l) => /(KUBE_CONFIG|REGISTRY_AUTH|K8S_REGISTRY) is missing/.exec(l)?.[1])).toEqual(['KUBE_CONFIG', 'REGISTRY_AUTH', 'K8S_REGISTRY']);
  });

  it('refuses a K8S_REGISTRY_TLS_VERIFY other than true/false, naming it', async () => {
    const r = await step(`. ${script} k8s`, { ...ALL, K8S_REGISTRY_TLS_VERIFY: 'no' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('K8S_REGISTRY_TLS_VERIFY must be true or false');
  });

  it('writes the secrets to 0600 files in a 0700 directory of RUNNER_TEMP and exports the paths for later steps', async () => {
    const r = await step(
      `. ${script} k8s; echo "path=$KUBE_CONFIG_PATH auth=$REGISTRY_AUTH_FILE reg=$K8S_REGISTRY ns=\${K8S_NAMESPACE-unset} left=\${KUBE_CONFIG-unset}/\${REGISTRY_AUTH-unset}"`,
      { ...ALL, K8S_NAMESPACE: 'prod', K8S_REGISTRY_TLS_VERIFY: 'false' },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = join(runnerTemp, 'deploy-secrets');
    const kube = join(dir, 'kubeconfig');
    const auth = join(dir, 'registry-auth.json');
    expect(r.stdout).toBe(`path=${kube} auth=${auth} reg=registry.test:5000 ns=prod left=unset/unset`);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(kube)).mode & 0o777).toBe(0o600);
    expect((await stat(auth)).mode & 0o777).toBe(0o600);
    expect(await readFile(kube, 'utf8')).toBe(KUBE_CONFIG);
    expect(await readFile(auth, 'utf8')).toBe(`${REGISTRY_AUTH}\n`);
    expect(await readdir(dir)).toEqual(['kubeconfig', 'registry-auth.json']);
    expect((await readFile(envFile, 'utf8')).split('\n').filter(Boolean)).toEqual([
      `DEPLOY_SECRETS_DIR=${dir}`,
      `KUBE_CONFIG_PATH=${kube}`,
      `REGISTRY_AUTH_FILE=${auth}`,
      'K8S_REGISTRY=registry.test:5000',
      'K8S_NAMESPACE=prod',
      'K8S_REGISTRY_TLS_VERIFY=false',
    ]);
    expectNoSecret(r.stdout + r.stderr);
  });

  it('writes K8S_REGISTRY_CA (a private registry CA) beside the secrets, exports K8S_REGISTRY_CA_FILE, and cleanup removes it', async () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n';
    const r = await step(`. ${script} k8s; cat "$K8S_REGISTRY_CA_FILE"; . ${script} cleanup; ls -A "$RUNNER_TEMP"`, { ...ALL, K8S_REGISTRY_CA: ca });
    expect(r.exitCode, r.stderr).toBe(0);
    const file = join(runnerTemp, 'deploy-secrets', 'registry-ca.pem');
    expect(r.stdout).toBe(ca.trimEnd());
    expect((await readFile(envFile, 'utf8')).split('\n')).toContain(`K8S_REGISTRY_CA_FILE=${file}`);
    expect(await readdir(runnerTemp)).toEqual([]);
  });

  it.each([
    [{ K8S_REGISTRY_CA: 'not a certificate' }, /K8S_REGISTRY_CA holds no PEM certificate/],
    [{ K8S_REGISTRY_CA: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----', K8S_REGISTRY_TLS_VERIFY: 'false' }, /K8S_REGISTRY_CA and K8S_REGISTRY_TLS_VERIFY=false contradict/],
  ])('refuses a K8S_REGISTRY_CA it cannot use (%o), naming it, and writes nothing', async (vars, message) => {
    const r = await step(`. ${script} k8s`, { ...ALL, ...vars });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(await readdir(runnerTemp)).toEqual([]);
  });

  it('prints no secret even when the caller traces (set -x), and restores the trace after', async () => {
    const r = await step(`set -x; . ${script} k8s; echo traced-after`, ALL);
    expect(r.exitCode, r.stderr).toBe(0);
    expectNoSecret(r.stdout + r.stderr);
    expect(r.stderr).toContain('+ echo traced-after');
  });

  it('prints no secret when it fails part-way either', async () => {
    const r = await step(`set -x; . ${script} k8s`, { ...ALL, K8S_REGISTRY: '' });
    expect(r.exitCode).toBe(2);
    expectNoSecret(r.stdout + r.stderr);
  });

  it('is harmless when sourced twice: in one shell (secrets already consumed) and in a later step', async () => {
    const first = await step(`. ${script} k8s; . ${script} k8s; echo "$KUBE_CONFIG_PATH"`, ALL);
    expect(first.exitCode, first.stderr).toBe(0);
    const dir = join(runnerTemp, 'deploy-secrets');
    expect(first.stdout).toBe(join(dir, 'kubeconfig'));
    // A later step: the env file's variables plus the secrets mapped again.
    const exported = Object.fromEntries(
      (await readFile(envFile, 'utf8')).split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    const second = await step(`. ${script} k8s; cat "$KUBE_CONFIG_PATH"`, { ...ALL, ...exported });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toBe(KUBE_CONFIG.trimEnd());
    expect(await readdir(dir)).toEqual(['kubeconfig', 'registry-auth.json']);
    expect((await stat(join(dir, 'kubeconfig'))).mode & 0o777).toBe(0o600);
  });

  it('cleanup removes the two files and their directory, and only those', async () => {
    const r = await step(`. ${script} k8s; touch "$RUNNER_TEMP/other"; . ${script} cleanup; ls -A "$RUNNER_TEMP"`, ALL);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('other');
    expect(r.stderr).toContain('cleanup: removed the secret files');
    const again = await step(`. ${script} cleanup`, {});
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain('nothing to remove');
  });

  it('refuses an unknown profile and being run instead of sourced', async () => {
    const unknown = await step(`. ${script} prod`, ALL);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("profile 'prod' is unknown");
    const run = await step(`bash ${script} k8s`, ALL);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('source this file');
    expect(await readdir(runnerTemp)).toEqual([]);
  });
});

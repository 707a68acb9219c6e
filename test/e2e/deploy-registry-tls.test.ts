/**
 * Issue 29, the registry bullet: a registry with TLS from a CA of its own and basic auth
 * (test/cluster/registry.sh --tls --auth), trusted through K8S_REGISTRY_CA_FILE by skopeo (the
 * graph's push and digest read) and by the no-op check's in-process tag reads, and by the
 * cluster's containerd through a hosts.toml naming the same CA (the cluster operator's part:
 * docs/registry-tls.md). The group deploys from it, the second plan is verified without a
 * refresh, a CA at another path is a full plan, and a CA that did not sign the registry's
 * certificate fails the plan naming the setting.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../src/tools/discover.js';
import { freePort, parseKeyValues, registry, type BuiltImage } from '../integration/images-scripts.js';
import { makeTestCa } from '../support/test-ca.js';
import { DeployHarness, images } from './harness.js';
import { stateDir as clusterStateDir } from './global-setup.js';

const NAME = 'tls-e2e';

describe('a registry with TLS from its own CA and basic auth (K8S_REGISTRY_CA_FILE)', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let port: number;
  let caFile: string;
  let hostsDir: string;
  let env: NodeJS.ProcessEnv;
  let plan: string;
  const user = 'e2e-tls';
  const pass = randomBytes(18).toString('base64url');
  const basic = Buffer.from(`${user}:${pass}`).toString('base64');

  beforeAll(async () => {
    h = await DeployHarness.create('regtls');
    good = await images.good();
    port = await freePort();
    const up = await registry(['up', '--name', NAME, '--port', String(port), '--auth', user, '--tls'], { env: h.env, input: `${pass}\n` });
    expect(up.exitCode, up.stderr).toBe(0);
    const exports = parseKeyValues(up.stdout);
    expect(exports).toMatchObject({ K8S_REGISTRY: `127.0.0.1:${port}`, K8S_REGISTRY_TLS_VERIFY: 'true' });
    caFile = exports.K8S_REGISTRY_CA_FILE!;
    // the cluster's pulls: containerd reads certs.d/<host:port>/hosts.toml at each pull (no
    // restart); the CA checks the registry, the header carries the pull's credentials
    hostsDir = join(clusterStateDir(), 'certs.d', `127.0.0.1:${port}`);
    await mkdir(hostsDir, { recursive: true });
    await writeFile(
      join(hostsDir, 'hosts.toml'),
      [
        `server = "https://127.0.0.1:${port}"`,
        `[host."https://127.0.0.1:${port}"]`,
        '  capabilities = ["pull", "resolve"]',
        `  ca = "${caFile}"`,
        `  [host."https://127.0.0.1:${port}".header]`,
        `    Authorization = "Basic ${basic}"`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const authFile = join(h.dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths: { [`127.0.0.1:${port}`]: { auth: basic } } }), { mode: 0o600 });
    env = { K8S_REGISTRY: `127.0.0.1:${port}`, K8S_REGISTRY_TLS_VERIFY: 'true', K8S_REGISTRY_CA_FILE: caFile, REGISTRY_AUTH_FILE: authFile };
    plan = await h.writePlan('group', { sealed: { image: good } });
  });
  afterAll(async () => {
    await rm(hostsDir, { recursive: true, force: true });
    if (h) await registry(['down', '--name', NAME, '--purge'], { env: h.env });
    await h?.cleanup();
  });

  it('GIVEN the registry really checks: without the CA the TLS handshake fails, without credentials the push is refused', async () => {
    const skopeo = requireTool('skopeo', h.env).path;
    const noCa = await execa(skopeo, ['inspect', `docker://127.0.0.1:${port}/x/y:z`], { reject: false, env: { ...h.env, ...env }, timeout: 60_000 });
    expect(noCa.stderr).toMatch(/x509|certificate/);
    const noAuth = await execa('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', caFile, `https://127.0.0.1:${port}/v2/`], { reject: false });
    expect(noAuth.stdout).toBe('401');
  });

  it('WHEN applied THEN the pod is Ready on the pushed digest, and the second plan is verified without a refresh', async () => {
    const a = await h.deploy('apply', plan, ['--target', 'all'], env);
    expect(a.exitCode, a.stderr).toBe(0);
    const ref = `127.0.0.1:${port}/${h.namespace}/sealed`;
    const certDir = join(h.dir, 'certs');
    await mkdir(certDir, { recursive: true });
    await copyFile(caFile, join(certDir, 'ca.crt'));
    const skopeo = requireTool('skopeo', h.env).path;
    const inspect = await execa(skopeo, ['inspect', '--cert-dir', certDir, '--format', '{{.Digest}}', `docker://${ref}:${good.tag}`], { env: { ...h.env, ...env }, timeout: 60_000 });
    const digest = inspect.stdout.trim();
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const pod = await h.podOf('sealed');
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    expect(pod.spec.containers[0].image).toBe(`${ref}@${digest}`);
    expect(pod.status.containerStatuses[0].imageID).toContain(digest);

    const first = await h.deploy('plan', plan, ['--target', 'all'], env);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json.targets[0].changes, first.stdout).toBe(false);
    const second = await h.deploy('plan', plan, ['--target', 'all'], env);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain('no changes, verified without a refresh');
    expect(second.json.targets[0].verifiedNoop, second.stderr).toBe(true);
  });

  it('GIVEN the same CA at another path THEN a full plan (the CA is an input of the check), and the plan after it is verified again', async () => {
    const moved = join(h.dir, 'moved-ca.crt');
    await copyFile(caFile, moved);
    const r = await h.deploy('plan', plan, ['--target', 'all'], { ...env, K8S_REGISTRY_CA_FILE: moved });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('full plan: ');
    expect(r.json.targets[0].verifiedNoop).toBeUndefined();
    expect(r.json.targets[0].changes, r.stdout).toBe(false);
    const again = await h.deploy('plan', plan, ['--target', 'all'], { ...env, K8S_REGISTRY_CA_FILE: moved });
    expect(again.json.targets[0].verifiedNoop, again.stderr).toBe(true);
  });

  it('GIVEN every file named relative to another working directory (the group plan, --kubeconfig, K8S_REGISTRY_CA_FILE) THEN the check and tofu both find them: a full plan (tofu\'s provider reads the kubeconfig from the graph directory) and an apply exit 0 (issue 46)', async () => {
    const cwd = join(h.dir, 'elsewhere', 'deeper');
    await mkdir(cwd, { recursive: true });
    await copyFile(h.env.KUBE_CONFIG_PATH!, join(h.dir, 'elsewhere', 'admin.kubeconfig'));
    const rel = (file: string) => relative(cwd, file);
    const relEnv = { ...env, K8S_REGISTRY_CA_FILE: rel(caFile), KUBE_CONFIG_PATH: '' };
    const args = ['--target', 'all', '--kubeconfig', '../admin.kubeconfig'];
    const full = await h.deploy('plan', rel(plan), args, { ...relEnv, DEPLOY_FAST_PLAN: 'off' }, { cwd });
    expect(full.exitCode, full.stderr).toBe(0);
    expect(full.json.targets[0].changes, full.stdout).toBe(false);
    const a = await h.deploy('apply', rel(plan), args, { ...relEnv, DEPLOY_FAST_PLAN: 'off' }, { cwd });
    expect(a.exitCode, a.stderr).toBe(0);
    const status = await h.deploy('status', rel(plan), ['--target', 'all', '--kubeconfig', '../admin.kubeconfig'], relEnv, { cwd });
    expect(status.exitCode, status.stderr).toBe(0);
  });

  it('GIVEN a CA that did not sign the registry certificate THEN the plan fails naming K8S_REGISTRY_CA_FILE, and nothing changes', async () => {
    const other = await makeTestCa(h.dir, 'other');
    const podBefore = (await h.podOf('sealed')).metadata.uid;
    const r = await h.deploy('plan', plan, ['--target', 'all'], { ...env, K8S_REGISTRY_CA_FILE: other.caFile }, { json: false });
    expect(r.exitCode, r.stderr).toBe(3);
    // another CA is another input: the full plan runs, and skopeo's failure gets the hint naming the setting
    expect(r.stderr).toContain('full plan: ');
    expect(r.stderr).toContain('x509');
    expect(r.stderr).toContain('what to do: the registry\'s TLS certificate did not verify: for a registry with a private CA, set K8S_REGISTRY_CA_FILE to the PEM file of the CA that signed it');
    expect((await h.podOf('sealed')).metadata.uid).toBe(podBefore);
  });

  it('GIVEN a CA file that is no PEM certificate THEN exit 2 naming the variable and the file, before anything runs', async () => {
    const bad = join(h.dir, 'not-a-ca.txt');
    await writeFile(bad, 'not a certificate\n');
    const r = await h.deploy('apply', plan, ['--target', 'all'], { ...env, K8S_REGISTRY_CA_FILE: bad }, { json: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`K8S_REGISTRY_CA_FILE: ${bad} holds no PEM certificate`);
    expect(r.stderr).not.toContain('tofu');
  });
});

/**
 * Secrets never in argv, state, graph, logs or stdout (law 6): a full apply with a registry
 * that needs credentials (REGISTRY_AUTH_FILE) and a kubeconfig with a bearer token, while
 * every process's arguments are sampled; then a search of everything the run left.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeployHarness, filesUnder, images, sampleArgv } from './harness.js';
import { freePort } from '../integration/images-scripts.js';
import { stateDir as clusterStateDir } from './global-setup.js';

/** Registry front that wants basic auth for everything but anonymous pulls (so the cluster pulls without credentials, and only the deployer's pushes need them). */
function authProxy(upstream: string, user: string, pass: string): Server {
  const [upHost, upPort] = upstream.split(':');
  const expected = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  return createServer((req, res) => {
    const anonymousPull = (req.method === 'GET' || req.method === 'HEAD') && /^\/v2\/.+\/(manifests|blobs)\//.test(req.url ?? '');
    if (req.headers.authorization !== expected && !anonymousPull) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="e2e"', 'Docker-Distribution-API-Version': 'registry/2.0' });
      res.end();
      req.resume();
      return;
    }
    const headers = { ...req.headers };
    delete headers.authorization;
    const up = request({ host: upHost, port: Number(upPort), method: req.method, path: req.url, headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
}

describe('secrets stay out of argv, state, graph, logs and stdout', () => {
  let h: DeployHarness;
  let proxy: Server;
  let port: number;
  let hostsDir: string;
  const user = 'e2e-pusher';
  const pass = randomBytes(18).toString('base64url');
  let token: string;
  let kubeconfig: string;
  let authFile: string;
  const sa = `e2e-deployer-${process.pid}`;

  beforeAll(async () => {
    h = await DeployHarness.create('secrets');
    port = await freePort();
    proxy = authProxy(h.env.K8S_REGISTRY!, user, pass);
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    // the cluster pulls from the front like from the local registry (containerd hosts dir)
    hostsDir = join(clusterStateDir(), 'certs.d', `127.0.0.1:${port}`);
    await mkdir(hostsDir, { recursive: true });
    await writeFile(join(hostsDir, 'hosts.toml'), `server = "http://127.0.0.1:${port}"\n[host."http://127.0.0.1:${port}"]\n  capabilities = ["pull", "resolve"]\n`);
    authFile = join(h.dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths: { [`127.0.0.1:${port}`]: { auth: Buffer.from(`${user}:${pass}`).toString('base64') } } }));
    await chmod(authFile, 0o600);
    // a kubeconfig with a bearer token of a service account (not a client certificate)
    await h.kubectlOk(['-n', 'kube-system', 'create', 'serviceaccount', sa], { namespace: null });
    await h.kubectlOk(['create', 'clusterrolebinding', sa, '--clusterrole=cluster-admin', `--serviceaccount=kube-system:${sa}`], { namespace: null });
    token = (await h.kubectlOk(['-n', 'kube-system', 'create', 'token', sa, '--duration=1h'], { namespace: null })).trim();
    const admin = JSON.parse(await h.kubectlOk(['config', 'view', '--raw', '--minify', '-o', 'json'], { namespace: null }));
    kubeconfig = join(h.dir, 'token.kubeconfig');
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: admin.clusters[0].cluster }],
        users: [{ name: 'u', user: { token } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    await chmod(kubeconfig, 0o600);
  });
  afterAll(async () => {
    await h.kubectl(['delete', 'clusterrolebinding', sa, '--ignore-not-found'], { namespace: null });
    await h.kubectl(['-n', 'kube-system', 'delete', 'serviceaccount', sa, '--ignore-not-found'], { namespace: null });
    await new Promise((resolve) => proxy?.close(resolve));
    await rm(hostsDir, { recursive: true, force: true });
    await h?.cleanup();
  });

  it('GIVEN no credentials THEN the push is refused (the registry really needs them)', async () => {
    const plan = await h.writePlan('noauth', { sealed: { image: await images.good() } });
    const r = await h.deploy('apply', plan, ['--target', 'all', '--registry', `127.0.0.1:${port}`], { KUBE_CONFIG_PATH: kubeconfig }, { json: false });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/authentication required|unauthorized|401/i);
    expect((await h.kubectl(['get', 'namespace', h.namespace], { namespace: null })).exitCode).not.toBe(0);
  });

  it('GIVEN credentials and a token WHEN a full apply runs THEN neither appears anywhere', async () => {
    const plan = await h.writePlan('group', { sealed: { image: await images.good() } });
    const seen = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await sampleArgv(seen);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const env = { K8S_REGISTRY: `127.0.0.1:${port}`, KUBE_CONFIG_PATH: kubeconfig, REGISTRY_AUTH_FILE: authFile, DEPLOY_LOG_LEVEL: 'debug' };
    const r = await h.deploy('apply', plan, ['--target', 'all'], env, { json: false });
    const p = await h.deploy('plan', plan, ['--target', 'all'], env);
    sampling = false;
    await sampler;
    expect(r.exitCode, r.stderr).toBe(0);
    expect((await h.podOf('sealed')).status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
    expect(p.json.targets[0].changes).toBe(false);
    expect(seen.size).toBeGreaterThan(10);
    expect([...seen].some((c) => c.includes('rollout --namespace'))).toBe(true); // sampled while the run was live

    const secrets = { token, password: pass, basic: Buffer.from(`${user}:${pass}`).toString('base64') };
    const haystacks: [string, Buffer | string][] = [
      ['stdout', r.stdout + p.stdout],
      ['stderr', r.stderr + p.stderr],
      ['argv', [...seen].join('\n')],
    ];
    for (const f of await filesUnder(join(h.dir, 'state'))) haystacks.push([f, await readFile(f)]);
    expect(haystacks.length).toBeGreaterThan(5);
    const hits: string[] = [];
    for (const [where, text] of haystacks) {
      for (const [name, secret] of Object.entries(secrets)) {
        if (Buffer.isBuffer(text) ? text.includes(secret) : text.includes(secret)) hits.push(`${name} in ${where}`);
      }
    }
    expect(hits).toEqual([]);
  });
});

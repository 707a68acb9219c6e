/**
 * The fast list reads of `deploy status` (kube-read.ts) against a small HTTPS server with a CA
 * and a client certificate made here (openssl), as the local cluster's kubeconfig has them; exec
 * plugins, impersonation, token files, the context of KUBE_CTX and a proxy-url; a kubeconfig
 * that needs an auth-provider is left to the full client.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeApiError } from '../../../src/kube/api-error.js';
import { openKubeLister } from '../../../src/kube/kube-read.js';
import { tempDir } from '../helpers.js';

let dir = '';
let cleanup: () => Promise<void>;
let server: Server;
let port = 0;
const seen: { url: string; auth: string | undefined; clientCert: boolean }[] = [];

function openssl(args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('deploy-kube-read-'));
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=test-ca', '-days', '1']);
  for (const [name, cn, ext] of [['server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1'], ['client', 'admin', 'extendedKeyUsage=clientAuth']] as const) {
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
    await writeFile(join(dir, `${name}.ext`), `${ext}\n`);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`]);
  }
  const read = (f: string) => readFileSync(join(dir, f));
  server = createServer({ key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization, clientCert: (req.socket as import('node:tls').TLSSocket).authorized });
    if (req.url?.startsWith('/api/v1/namespaces/ns1/pods')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '42' }, items: [{ metadata: { name: 'p' } }] }));
    } else {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 403, message: 'deployments.apps is forbidden: User "admin" cannot list resource "deployments"' }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await cleanup();
});

const kubeconfig = async (user: string, cluster = `certificate-authority-data: ${readFileSync(join(dir, 'ca.crt')).toString('base64')}`) => {
  const file = join(dir, `kc-${seen.length}-${Math.random()}.yaml`);
  await writeFile(file, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:${port}\n    ${cluster}\nusers:\n- name: u\n  user:\n${user}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`);
  return file;
};

describe('openKubeLister', () => {
  it('GIVEN a CA and a client certificate as files (relative to the kubeconfig) THEN it lists with them, the selector in the query', async () => {
    const file = await kubeconfig('    client-certificate: client.crt\n    client-key: client.key', 'certificate-authority: ca.crt');
    const lister = await openKubeLister({ KUBE_CONFIG_PATH: file }, { requestMs: 5000, attempts: 1 });
    const pods = await lister!.listPods('ns1', 'app.kubernetes.io/managed-by=deploy');
    expect(pods).toEqual({ items: [{ metadata: { name: 'p' } }], resourceVersion: '42' });
    expect(seen.at(-1)).toEqual({ url: '/api/v1/namespaces/ns1/pods?labelSelector=app.kubernetes.io%2Fmanaged-by%3Ddeploy', auth: undefined, clientCert: true });
  });
  it('GIVEN a bearer token THEN it is sent; an answer other than 200 carries its code and the message', async () => {
    const lister = await openKubeLister({ KUBE_CONFIG_PATH: await kubeconfig('    token: abc') }, { requestMs: 5000, attempts: 1 });
    const err = await lister!.listDeployments('ns1', '').then(() => undefined, (e: { code: number; body: string }) => e);
    expect(err?.code).toBe(403);
    expect(describeApiError(err)).toBe('HTTP 403: deployments.apps is forbidden: User "admin" cannot list resource "deployments"');
    expect(seen.at(-1)).toMatchObject({ url: '/apis/apps/v1/namespaces/ns1/deployments', auth: 'Bearer abc' });
  });
  it('GIVEN a server whose certificate the CA did not sign THEN the request fails', async () => {
    const other = `certificate-authority-data: ${readFileSync(join(dir, 'client.crt')).toString('base64')}`;
    const lister = await openKubeLister({ KUBE_CONFIG_PATH: await kubeconfig('    token: abc', other) }, { requestMs: 5000, attempts: 1 });
    await expect(lister!.listPods('ns1', '')).rejects.toThrow();
  });
  it('GIVEN an auth-provider THEN undefined: the full client reads it', async () => {
    const file = await kubeconfig('    auth-provider: {name: oidc, config: {id-token: x}}');
    expect(await openKubeLister({ KUBE_CONFIG_PATH: file }, { requestMs: 5000, attempts: 1 })).toBeUndefined();
  });
});

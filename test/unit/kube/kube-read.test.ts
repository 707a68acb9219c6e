/**
 * The fast list reads of `deploy status` (kube-read.ts) against a small HTTPS server with a CA
 * and a client certificate made here (openssl), as the local cluster's kubeconfig has them; exec
 * plugins, impersonation, token files, the context of KUBE_CTX and a proxy-url; a kubeconfig
 * that needs an auth-provider is left to the full client.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createTcpServer, connect as tcpConnect, type Server as TcpServer } from 'node:net';
import { resolve } from 'node:path';
import { describeApiError } from '../../../src/kube/api-error.js';
import { clearExecCredentials } from '../../../src/kube/exec-credential.js';
import { headerKeyEscape } from '../../../src/kube/kube-identity.js';
import { openKubeLister } from '../../../src/kube/kube-read.js';
import { openKubeAccess } from '../../../src/kube/kubeconfig.js';
import { tempDir } from '../../support/cli.js';

const PLUGIN = resolve(import.meta.dirname, '../../fixtures/token-plugin.sh');

let dir = '';
let cleanup: () => Promise<void>;
let server: Server;
let port = 0;
const seen: { url: string; auth: string | undefined; clientCert: boolean }[] = [];
/** Every request's headers, for the impersonation headers. */
const headers: import('node:http').IncomingHttpHeaders[] = [];
/** Answer this many requests 401 (a credential the server refuses). */
let refuse = 0;

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
    headers.push(req.headers);
    if (refuse > 0) {
      refuse--;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 401, message: 'Unauthorized' }));
    } else if (req.url?.startsWith('/api/v1/namespaces/ns1/pods/p/log')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('line one\nline two\n');
    } else if (req.url?.startsWith('/api/v1/namespaces/ns1/pods?watch=true')) {
      // two events, the first split across writes, a bookmark, a line that is no JSON, then the end
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"p","resourceVersion":"43"}}}\n{"type":"MODI');
      setTimeout(() => {
        res.write('FIED","object":{"metadata":{"name":"p","resourceVersion":"44"}}}\n{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"45"}}}\nnot json\n');
        setTimeout(() => res.end(), 50);
      }, 50);
    } else if (req.url?.startsWith('/api/v1/namespaces/gone/pods?watch=true')) {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 410, message: 'too old resource version' }));
    } else if (req.url?.startsWith('/api/v1/namespaces/slow/pods?watch=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('');
    } else if (req.method === 'PATCH' && req.url?.startsWith('/apis/apps/v1/namespaces/ns1/deployments/d')) {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ contentType: req.headers['content-type'], body: JSON.parse(body) }));
      });
    } else if (req.url?.startsWith('/api/v1/namespaces/ns1/pods')) {
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
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file } }), { requestMs: 5000, attempts: 1 });
    const pods = await lister!.listPods('ns1', 'app.kubernetes.io/managed-by=deploy');
    expect(pods).toEqual({ items: [{ metadata: { name: 'p' } }], resourceVersion: '42' });
    expect(seen.at(-1)).toEqual({ url: '/api/v1/namespaces/ns1/pods?labelSelector=app.kubernetes.io%2Fmanaged-by%3Ddeploy', auth: undefined, clientCert: true });
  });
  it('GIVEN a bearer token THEN it is sent; an answer other than 200 carries its code and the message', async () => {
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: abc') } }), { requestMs: 5000, attempts: 1 });
    const err = await lister!.listDeployments('ns1', '').then(() => undefined, (e: { code: number; body: string }) => e);
    expect(err?.code).toBe(403);
    expect(describeApiError(err)).toBe('HTTP 403: deployments.apps is forbidden: User "admin" cannot list resource "deployments"');
    expect(seen.at(-1)).toMatchObject({ url: '/apis/apps/v1/namespaces/ns1/deployments', auth: 'Bearer abc' });
  });
  it('GIVEN a server whose certificate the CA did not sign THEN the request fails', async () => {
    const other = `certificate-authority-data: ${readFileSync(join(dir, 'client.crt')).toString('base64')}`;
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: abc', other) } }), { requestMs: 5000, attempts: 1 });
    await expect(lister!.listPods('ns1', '')).rejects.toThrow();
  });
  it('GIVEN a watch THEN each event line goes to the callback as it comes (a line split across writes too), bookmarks included, and done(null) once at the end', async () => {
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: abc') } }), { requestMs: 5000, attempts: 1 });
    const events: [string, unknown][] = [];
    const ended = new Promise<unknown>((resolve) => {
      void lister!.watch.watch('/api/v1/namespaces/ns1/pods', { resourceVersion: '42', allowWatchBookmarks: true, labelSelector: undefined }, (type, obj) => events.push([type, obj]), resolve);
    });
    expect(await ended).toBeNull();
    expect(events).toEqual([
      ['ADDED', { metadata: { name: 'p', resourceVersion: '43' } }],
      ['MODIFIED', { metadata: { name: 'p', resourceVersion: '44' } }],
      ['BOOKMARK', { metadata: { resourceVersion: '45' } }],
    ]);
    expect(seen.at(-1)).toMatchObject({ url: '/api/v1/namespaces/ns1/pods?watch=true&resourceVersion=42&allowWatchBookmarks=true', auth: 'Bearer abc' });
  });
  it('GIVEN a watch the server refuses (410 Gone) THEN done gets an error with its statusCode, as the client\'s Watch gives it', async () => {
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: abc') } }), { requestMs: 5000, attempts: 1 });
    const err = await new Promise<{ statusCode?: number }>((resolve) => void lister!.watch.watch('/api/v1/namespaces/gone/pods', {}, () => {}, resolve));
    expect(err.statusCode).toBe(410);
  });
  it('GIVEN a watch that is stopped THEN done(null), and the controller came back once the answer began', async () => {
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: abc') } }), { requestMs: 5000, attempts: 1 });
    let done: unknown = 'not yet';
    const controller = await lister!.watch.watch('/api/v1/namespaces/slow/pods', {}, () => {}, (err) => (done = err));
    expect(done).toBe('not yet');
    controller.abort();
    expect(done).toBeNull();
  });
  it("GIVEN a pod's log and patches THEN the text comes as it is, and each patch has its content type and field manager", async () => {
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: abc') } }), { requestMs: 5000, attempts: 1 });
    expect(await lister!.text('log', '/api/v1/namespaces/ns1/pods/p/log', { container: 'node', tailLines: '2' })).toBe('line one\nline two\n');
    expect(seen.at(-1)?.url).toBe('/api/v1/namespaces/ns1/pods/p/log?container=node&tailLines=2');
    expect(await lister!.mergePatch('annotate', '/apis/apps/v1/namespaces/ns1/deployments/d', { metadata: { annotations: { a: 'b' } } }, 'deploy-rollout')).toEqual({ contentType: 'application/merge-patch+json', body: { metadata: { annotations: { a: 'b' } } } });
    expect(seen.at(-1)?.url).toBe('/apis/apps/v1/namespaces/ns1/deployments/d?fieldManager=deploy-rollout');
    expect(await lister!.jsonPatch('patch', '/apis/apps/v1/namespaces/ns1/deployments/d', [{ op: 'remove', path: '/x' }], 'deploy-rollout')).toEqual({ contentType: 'application/json-patch+json', body: [{ op: 'remove', path: '/x' }] });
  });
  it('GIVEN an auth-provider THEN undefined: the full client reads it', async () => {
    const file = await kubeconfig('    auth-provider: {name: oidc, config: {id-token: x}}');
    expect(await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file } }), { requestMs: 5000, attempts: 1 })).toBeUndefined();
  });
});

describe('openKubeLister: who the requests are', () => {
  const opts = { requestMs: 5000, attempts: 1 };
  const runs = (calls: string) => (readFileSync(calls, { encoding: 'utf8', flag: 'a+' }) || '').split('\n').filter((l) => l !== '').length;
  let plugins = 0;
  async function pluginUser(extraEnv = ''): Promise<{ user: string; calls: string }> {
    const calls = join(dir, `calls-${++plugins}`);
    await writeFile(join(dir, 'plugin-token'), 'from-the-plugin\n');
    const user = [
      '    exec:',
      '      apiVersion: client.authentication.k8s.io/v1',
      `      command: ${PLUGIN}`,
      '      args: [--for, lister]',
      '      interactiveMode: Never',
      '      env:',
      `      - {name: PLUGIN_TOKEN_FILE, value: ${join(dir, 'plugin-token')}}`,
      `      - {name: PLUGIN_CALLS, value: ${calls}}`,
      extraEnv,
    ].filter((l) => l !== '').join('\n');
    return { user, calls };
  }

  it('GIVEN an exec plugin THEN its token is sent, and one run serves every request of the lister', async () => {
    clearExecCredentials();
    const { user, calls } = await pluginUser();
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig(user) } }), opts);
    await Promise.all([lister!.listPods('ns1', ''), lister!.listPods('ns1', ''), lister!.listPods('ns1', '')]);
    expect(seen.at(-1)!.auth).toBe('Bearer from-the-plugin');
    expect(runs(calls)).toBe(1);
  });

  it("GIVEN a plugin that prints a client certificate and key THEN the TLS connection presents them, with no Authorization", async () => {
    clearExecCredentials();
    const { user, calls } = await pluginUser(`      - {name: PLUGIN_CERT_FILE, value: ${join(dir, 'client.crt')}}\n      - {name: PLUGIN_KEY_FILE, value: ${join(dir, 'client.key')}}`);
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig(user) } }), opts);
    await lister!.listPods('ns1', '');
    expect(seen.at(-1)).toMatchObject({ auth: undefined, clientCert: true });
    expect(runs(calls)).toBe(1);
  });

  it('GIVEN a plain-http server THEN nothing of the user is sent and the plugin does not run (client-go reads the user only for TLS)', async () => {
    clearExecCredentials();
    const got: (string | undefined)[] = [];
    const plain = createHttpServer((req, res) => {
      got.push(`${req.headers.authorization} ${req.headers['impersonate-user']}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"items":[],"metadata":{"resourceVersion":"1"}}');
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const { user, calls } = await pluginUser('    as: alice');
      const file = join(dir, 'plain.yaml');
      await writeFile(file, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:${(plain.address() as AddressInfo).port}"}\nusers:\n- name: u\n  user:\n${user}\ncontexts:\n- {name: x, context: {cluster: c, user: u}}\ncurrent-context: x\n`);
      const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file } }), opts);
      await lister!.listPods('ns1', '');
      expect(got).toEqual(['undefined undefined']);
      expect(runs(calls)).toBe(0);
    } finally {
      await new Promise((r) => plain.close(r));
    }
  });

  it("GIVEN the server refuses the plugin's credential (401) THEN the plugin runs again, once, and the request is sent again", async () => {
    clearExecCredentials();
    const { user, calls } = await pluginUser();
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig(user) } }), opts);
    refuse = 1;
    expect((await lister!.listPods('ns1', '')).resourceVersion).toBe('42');
    expect(runs(calls)).toBe(2);
    refuse = 2;
    const err = await lister!.listPods('ns1', '').then(() => undefined, (e: { code?: number }) => e);
    expect(err?.code).toBe(401);
    expect(runs(calls)).toBe(3);
    refuse = 0;
  });

  it('GIVEN a token as well as an exec plugin THEN the token is used and the plugin does not run (client-go)', async () => {
    clearExecCredentials();
    const { user, calls } = await pluginUser();
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig(`${user}\n    token: static`) } }), opts);
    await lister!.listPods('ns1', '');
    expect(seen.at(-1)!.auth).toBe('Bearer static');
    expect(runs(calls)).toBe(0);
  });

  it('GIVEN a tokenFile and a token THEN the file wins (read and trimmed), and a token alone when the file cannot be read', async () => {
    await writeFile(join(dir, 'token-file'), '  from-the-file\n');
    let lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: static\n    tokenFile: token-file') } }), opts);
    await lister!.listPods('ns1', '');
    expect(seen.at(-1)!.auth).toBe('Bearer from-the-file');
    lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    token: static\n    tokenFile: no-such-file') } }), opts);
    await lister!.listPods('ns1', '');
    expect(seen.at(-1)!.auth).toBe('Bearer static');
    await expect(openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig('    tokenFile: no-such-file') } }), opts)).rejects.toThrow(/tokenFile/);
  });

  it('GIVEN as, as-uid, as-groups and as-user-extra THEN the Impersonate-* headers, a group each', async () => {
    const user = '    token: abc\n    as: alice\n    as-uid: "1234"\n    as-groups: [dev, ops]\n    as-user-extra: {"scopes.example.com/a b": [x, y]}';
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: await kubeconfig(user) } }), opts);
    await lister!.listPods('ns1', '');
    const h = headers.at(-1)!;
    expect(h['impersonate-user']).toBe('alice');
    expect(h['impersonate-uid']).toBe('1234');
    expect(h['impersonate-group']).toBe('dev, ops');
    expect(h['impersonate-extra-scopes.example.com%2fa%20b'.toLowerCase()] ?? h['impersonate-extra-scopes.example.com%2Fa%20b'.toLowerCase()]).toBe('x, y');
    expect(headerKeyEscape('scopes.example.com/a b')).toBe('scopes.example.com%2Fa%20b');
  });

  it('GIVEN KUBE_CTX naming the other context THEN its cluster and user are used', async () => {
    const ca = readFileSync(join(dir, 'ca.crt')).toString('base64');
    const file = join(dir, 'two-contexts.yaml');
    await writeFile(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster: {server: "https://127.0.0.1:9"}\n- name: here\n  cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${ca}}\n` +
        `users:\n- {name: a, user: {token: first}}\n- {name: b, user: {token: second}}\ncontexts:\n- {name: one, context: {cluster: gone, user: a}}\n- {name: two, context: {cluster: here, user: b}}\ncurrent-context: one\n`,
    );
    const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file, KUBE_CTX: 'two' } }), opts);
    expect(lister!.server).toBe(`https://127.0.0.1:${port}`);
    await lister!.listPods('ns1', '');
    expect(seen.at(-1)!.auth).toBe('Bearer second');
  });

  it("GIVEN a cluster proxy-url THEN the request goes through the proxy's CONNECT tunnel, with the proxy's credentials", async () => {
    const connects: string[] = [];
    const sockets = new Set<import('node:net').Socket>();
    const proxy: TcpServer = createTcpServer((client) => {
      sockets.add(client);
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        client.off('data', onData);
        const lines = head.subarray(0, end).toString('latin1').split('\r\n');
        connects.push(lines.filter((l) => /^(CONNECT|Proxy-Authorization)/i.test(l)).join(' | '));
        const [host, p] = lines[0]!.split(' ')[1]!.split(':');
        const upstream = tcpConnect(Number(p), host!, () => {
          sockets.add(upstream);
          client.write('HTTP/1.1 200 Connection established\r\n\r\n');
          upstream.write(head.subarray(end + 4));
          client.pipe(upstream).pipe(client);
        });
        upstream.on('error', () => client.destroy());
      };
      client.on('data', onData);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const proxyPort = (proxy.address() as AddressInfo).port;
      const ca = readFileSync(join(dir, 'ca.crt')).toString('base64');
      const file = await kubeconfig('    token: abc', `certificate-authority-data: ${ca}\n    proxy-url: http://me:pw@127.0.0.1:${proxyPort}`);
      const lister = await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file } }), opts);
      const listed = await lister!.listPods('ns1', '').catch((e: Error) => e);
      expect(listed).toEqual({ items: [{ metadata: { name: 'p' } }], resourceVersion: '42' });
      expect(connects).toEqual([`CONNECT 127.0.0.1:${port} HTTP/1.1 | Proxy-Authorization: Basic ${Buffer.from('me:pw').toString('base64')}`]);
      expect(seen.at(-1)!.auth).toBe('Bearer abc');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('GIVEN a socks5 proxy-url THEN undefined: the full client reads it', async () => {
    const file = await kubeconfig('    token: abc', 'insecure-skip-tls-verify: true\n    proxy-url: socks5://127.0.0.1:1080');
    expect(await openKubeLister(openKubeAccess({ cwd: process.cwd(), env: { KUBE_CONFIG_PATH: file } }), opts)).toBeUndefined();
  });
});

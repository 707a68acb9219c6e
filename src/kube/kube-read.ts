/**
 * Fast requests for `deploy status` and the verified no-op check, which must answer in well
 * under two seconds. @kubernetes/client-node loads about a thousand modules (its generated API
 * and models): 0.5 s on an idle 2-core host, 1.2-2 s under load, most of a status run (measured
 * with --cpu-prof: the ESM loader's own work). A list is one GET, so this module reaches the
 * cluster itself, with the kubeconfig as kubectl and the apply's provider read it
 * (kubeconfig.ts: every file merged, the context of KUBE_CTX, the KUBE_* overrides), and answers
 * with the API server's raw JSON, as kube-api.ts does. It does what client-go's transport does
 * for those kubeconfigs (k8s.io/client-go/transport round_trippers.go, rest/transport.go):
 *
 * - TLS: the CA (file or data), insecure-skip-tls-verify, tls-server-name, a client certificate
 *   and key (files or data);
 * - who (kube-identity.ts): tokenFile (which wins over token when it can be read, as
 *   client-go's cached file token source does), token, basic auth, or an exec plugin
 *   (exec-credential.ts; a token, a client certificate or both). As in client-go's exec authenticator, a kubeconfig token, basic auth
 *   or client certificate is used instead of the plugin when given (UpdateTransportConfig);
 *   an answer 401 to a plugin's credential runs the plugin again, once;
 * - impersonation: `as`, `as-uid`, `as-groups`, `as-user-extra` as the Impersonate-* headers
 *   (transport.NewImpersonatingRoundTripper; extra keys escaped as headerKeyEscape does);
 * - none of who the user is over plain http (no credential, no plugin run, no impersonation),
 *   as client-go reads the user's part of the kubeconfig only for a TLS server;
 * - a proxy: the cluster's proxy-url, else HTTPS_PROXY / HTTP_PROXY / NO_PROXY (proxy-tunnel.ts).
 *
 * Left to the full client (openKubeLister answers undefined): a user's `auth-provider` (the
 * legacy oidc / gcp / azure plugins) and a socks5 proxy.
 * https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import { retryTransient, withDeadline } from '../deadline.js';
import { type Identity, identity, impersonationHeaders } from './kube-identity.js';
import type { ResolvedKubeconfig } from './kubeconfig-file.js';
import { resolveKubeconfig } from './kubeconfig.js';
import type { ListResult } from './list-watch.js';
import { connectProxy, connectThroughProxy, proxyAuthorization, proxyFor } from './proxy-tunnel.js';

export interface KubeLister {
  readonly server: string;
  listDeployments(namespace: string, fieldSelector: string): Promise<ListResult>;
  listPods(namespace: string, labelSelector: string): Promise<ListResult>;
  /** Any list by its API path (`/api/v1/namespaces/x/serviceaccounts`), for the verified no-op check. */
  list(what: string, path: string, query?: Record<string, string>): Promise<ListResult>;
  /** One object by its API path; undefined when it is gone (404). */
  get(what: string, path: string): Promise<unknown | undefined>;
  /**
   * A JSON patch (RFC 6902) of one object, as `fieldManager`: the ownership step's removal of
   * hand edits (src/workflow/undo-hand-edits.ts). Never retried: a refused patch is the caller's.
   */
  jsonPatch(what: string, path: string, ops: readonly unknown[], fieldManager: string): Promise<unknown>;
}

export interface KubeListerOptions {
  readonly requestMs: number;
  readonly attempts: number;
}

/**
 * Why the fast client cannot reach the cluster of this kubeconfig (the caller then uses the full
 * client, kube-api.ts), or undefined when it can.
 */
export function fullClientReason(k: ResolvedKubeconfig, env: NodeJS.ProcessEnv): string | undefined {
  if (k.user['auth-provider']) return `user "${k.userName}" has an auth-provider (${k.user['auth-provider'].name})`;
  const server = new URL(k.cluster.server!);
  if (proxyFor(server, k.cluster['proxy-url'], env)?.protocol === 'socks5:') return 'the API server is reached through a socks5 proxy';
  return undefined;
}

/** The lister of the kubeconfig's chosen context, or undefined when only the full client can reach it (fullClientReason). */
export async function openKubeLister(env: NodeJS.ProcessEnv, opts: KubeListerOptions): Promise<KubeLister | undefined> {
  const k = resolveKubeconfig(env);
  if (fullClientReason(k, env) !== undefined) return undefined;
  return kubeLister(k, env, opts);
}

function kubeLister(k: ResolvedKubeconfig, env: NodeJS.ProcessEnv, opts: KubeListerOptions): KubeLister {
  const { cluster, user } = k;
  const server = new URL(cluster.server!);
  const prefix = server.pathname.replace(/\/+$/, '');
  const fileOrData = (path: string | undefined, data: string | undefined) => (data !== undefined ? Buffer.from(data, 'base64') : path !== undefined ? readFileSync(path) : undefined);
  const ca = fileOrData(cluster['certificate-authority'], cluster['certificate-authority-data']);
  const trust: ConnectionOptions = { ...(ca ? { ca } : {}), rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true };
  const cert = fileOrData(user['client-certificate'], user['client-certificate-data']);
  const key = fileOrData(user['client-key'], user['client-key-data']);
  const tls: ConnectionOptions = {
    ...trust,
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
  };
  // client-go sends who the user is (credentials, impersonation) only over TLS
  // (clientcmd client_config.go ClientConfig: "only try to read the auth information if we are secure")
  const secure = server.protocol === 'https:';
  const who: Identity = secure ? identity(k, env) : { credential: () => Promise.resolve({ headers: {}, tls: {} }), refused: () => {} };
  const proxy = proxyFor(server, cluster['proxy-url'], env);
  const fixedHeaders: OutgoingHttpHeaders = { Accept: 'application/json', ...(secure ? impersonationHeaders(user) : {}) };

  /** One request with the credential of now; a 401 to a plugin's credential runs the plugin again, once. */
  const send = async (method: 'GET' | 'PATCH', path: string, body?: { type: string; text: string }): Promise<unknown> => {
    for (let attempt = 1; ; attempt++) {
      const cred = await who.credential();
      try {
        return await requestJson({ server, proxy, method, path: `${prefix}${path}`, tls: { ...tls, ...cred.tls }, trust, headers: { ...fixedHeaders, ...cred.headers }, ...(body ? { body } : {}) });
      } catch (err) {
        if ((err as { code?: unknown }).code !== 401 || cred.exec === undefined || attempt > 1) throw err;
        who.refused(cred.exec);
      }
    }
  };
  const get = (what: string, path: string, query: Record<string, string>) => {
    const q = new URLSearchParams(query).toString();
    return retryTransient(() => withDeadline(what, send('GET', `${path}${q ? `?${q}` : ''}`), opts.requestMs), { attempts: opts.attempts });
  };
  const list = async (what: string, path: string, query: Record<string, string>): Promise<ListResult> => {
    const raw = (await get(what, path, query)) as { items?: unknown[] | null; metadata?: { resourceVersion?: string } };
    return { items: raw.items ?? [], resourceVersion: raw.metadata?.resourceVersion ?? '' };
  };
  const nonEmpty = (key: string, v: string): Record<string, string> => (v ? { [key]: v } : {});
  return {
    server: cluster.server!,
    listDeployments: (ns, fieldSelector) => list('list Deployments', `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments`, nonEmpty('fieldSelector', fieldSelector)),
    listPods: (ns, labelSelector) => list('list Pods', `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`, nonEmpty('labelSelector', labelSelector)),
    list: (what, path, query = {}) => list(what, path, query),
    get: (what, path) =>
      get(what, path, {}).catch((err: { code?: unknown }) => {
        if (err.code === 404) return undefined;
        throw err;
      }),
    jsonPatch: (what, path, ops, fieldManager) =>
      withDeadline(what, send('PATCH', `${path}?${new URLSearchParams({ fieldManager })}`, { type: 'application/json-patch+json', text: JSON.stringify(ops) }), opts.requestMs),
  };
}

interface JsonRequest {
  readonly server: URL;
  readonly proxy: URL | undefined;
  readonly method: 'GET' | 'PATCH';
  /** The path and query on the server. */
  readonly path: string;
  /** TLS to the API server. */
  readonly tls: ConnectionOptions;
  /** The cluster's trust alone, for an https proxy (Go dials it with the same TLS settings). */
  readonly trust: ConnectionOptions;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: { readonly type: string; readonly text: string };
}

/** One request; a status other than 200 is thrown as `{code, body}`, which describeApiError and isTransient read. */
function requestJson(r: JsonRequest): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const host = r.server.hostname.replace(/^\[|\]$/g, '');
    const https = r.server.protocol === 'https:';
    const port = Number(r.server.port || (https ? 443 : 80));
    const headers: OutgoingHttpHeaders = {
      ...r.headers,
      ...(r.body ? { 'Content-Type': r.body.type, 'Content-Length': Buffer.byteLength(r.body.text) } : {}),
    };
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { code: res.statusCode, body }));
        try {
          resolvePromise(JSON.parse(body));
        } catch (err) {
          reject(err);
        }
      });
    };
    let req: ClientRequest;
    if (r.proxy === undefined) {
      const options: RequestOptions = { host, port, path: r.path, method: r.method, headers, ...(https ? r.tls : {}) };
      req = (https ? httpsRequest : httpRequest)(options, onResponse);
    } else if (https) {
      // CONNECT through the proxy, then TLS to the API server inside the tunnel
      const proxy = r.proxy;
      const createConnection = (_o: unknown, done: (err: Error | null, socket?: Duplex) => void) => {
        connectThroughProxy(proxy, host, port, r.trust, r.tls).then((s) => done(null, s), (err: Error) => done(err));
        return undefined;
      };
      req = httpRequest({ host, port, path: r.path, method: r.method, headers, createConnection } as RequestOptions, onResponse);
    } else {
      // a plain-http API server: the proxy forwards the request by its absolute URI
      const proxy = r.proxy;
      const auth = proxyAuthorization(proxy);
      const createConnection =
        proxy.protocol === 'https:'
          ? (_o: unknown, done: (err: Error | null, socket?: Duplex) => void) => {
              connectProxy(proxy, r.trust).then((s) => done(null, s), (err: Error) => done(err));
              return undefined;
            }
          : undefined;
      const options = {
        host: proxy.hostname.replace(/^\[|\]$/g, ''),
        port: Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80)),
        path: `${r.server.protocol}//${r.server.host}${r.path}`,
        method: r.method,
        headers: { ...headers, Host: r.server.host, ...(auth ? { 'Proxy-Authorization': auth } : {}) },
        ...(createConnection ? { createConnection } : {}),
      };
      req = httpRequest(options as RequestOptions, onResponse);
    }
    req.on('error', reject);
    req.end(r.body?.text);
  });
}

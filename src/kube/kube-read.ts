/**
 * Fast requests for `deploy status`, the verified no-op check (which must answer in well under
 * two seconds) and the rollout step, one process per changed node (rollout-api.ts).
 * @kubernetes/client-node loads about a thousand modules (its generated API and models): 0.5 s
 * on an idle 2-core host, 1.2-2 s under load, most of a status run (measured with --cpu-prof:
 * the ESM loader's own work). A list is one GET, so this module reaches the
 * cluster itself, with the kubeconfig as kubectl and the apply's provider read it
 * (kubeconfig.ts: every file merged, the context of KUBE_CTX, the KUBE_* overrides), and answers
 * with the API server's raw JSON, as kube-api.ts does; a watch too (one event a line, as the
 * client's Watch reads it). It does what client-go's transport does
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
import { z } from 'zod';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import { retryTransient, withDeadline } from '../deadline.js';
import { type Identity, identity, impersonationHeaders } from './kube-identity.js';
import type { ResolvedKubeconfig } from './kubeconfig-file.js';
import type { KubeAccess } from './kubeconfig.js';
import type { ListResult, WatchClient } from './list-watch.js';

/** One line of a watch: its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and the object. */
const watchEventSchema = z.looseObject({ type: z.string(), object: z.unknown() });
import { connectProxy, connectThroughProxy, proxyAuthorization, proxyFor } from './proxy-tunnel.js';

export interface KubeLister {
  readonly server: string;
  listDeployments(namespace: string, fieldSelector: string): Promise<ListResult>;
  listPods(namespace: string, labelSelector: string): Promise<ListResult>;
  /** Any list by its API path (`/api/v1/namespaces/x/serviceaccounts`), for the verified no-op check. */
  list(what: string, path: string, query?: Record<string, string>): Promise<ListResult>;
  /** One object by its API path (a signal ends the tries); undefined when it is gone (404). */
  get(what: string, path: string, signal?: AbortSignal): Promise<unknown | undefined>;
  /**
   * A JSON patch (RFC 6902) of one object, as `fieldManager`: the ownership step's removal of
   * hand edits (src/workflow/drift/undo-hand-edits.ts). Never retried: a refused patch is the caller's.
   */
  jsonPatch(what: string, path: string, ops: readonly unknown[], fieldManager: string, signal?: AbortSignal): Promise<unknown>;
  /** A JSON merge patch (RFC 7386) of one object, as `fieldManager`; never retried. */
  mergePatch(what: string, path: string, patch: unknown, fieldManager: string, signal?: AbortSignal): Promise<unknown>;
  /** A text answer (a pod's log) by its API path and query. */
  text(what: string, path: string, query: Record<string, string>, signal?: AbortSignal): Promise<string>;
  /** Watches as @kubernetes/client-node's Watch does (list-watch.ts): one event a line, `done` once at the end. */
  readonly watch: WatchClient;
}

/** A query of one selector, or none when it is empty. */
export const nonEmpty = (key: string, v: string): Record<string, string> => (v ? { [key]: v } : {});

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

/** The lister of the kubeconfig's chosen context (resolved once: kubeconfig.ts KubeAccess), or undefined when only the full client can reach it (fullClientReason). */
export async function openKubeLister(access: KubeAccess, opts: KubeListerOptions): Promise<KubeLister | undefined> {
  const { kubeconfig: k, env } = access;
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

  /** The request of `path` with the credential of now. */
  const requestOf = async (method: JsonRequest['method'], path: string, body?: JsonRequest['body']) => {
    const cred = await who.credential();
    const r: JsonRequest = { server, proxy, method, path: `${prefix}${path}`, tls: { ...tls, ...cred.tls }, trust, headers: { ...fixedHeaders, ...cred.headers }, ...(body ? { body } : {}) };
    return { r, exec: cred.exec };
  };
  /** One request; a 401 to a plugin's credential runs the plugin again, once. */
  const send = async (method: JsonRequest['method'], path: string, body?: JsonRequest['body'], answer: 'json' | 'text' = 'json'): Promise<unknown> => {
    for (let attempt = 1; ; attempt++) {
      const { r, exec } = await requestOf(method, path, body);
      try {
        return await requestJson(r, answer);
      } catch (err) {
        if ((err as { code?: unknown }).code !== 401 || exec === undefined || attempt > 1) throw err;
        who.refused(exec);
      }
    }
  };
  const withQuery = (path: string, query: Record<string, string>) => {
    const q = new URLSearchParams(query).toString();
    return `${path}${q ? `?${q}` : ''}`;
  };
  const get = (what: string, path: string, query: Record<string, string>, signal?: AbortSignal) =>
    retryTransient(() => withDeadline(what, send('GET', withQuery(path, query)), opts.requestMs, signal), { attempts: opts.attempts, ...(signal ? { signal } : {}) });
  const gone = (err: { code?: unknown }) => {
    if (err.code === 404) return undefined;
    throw err;
  };
  const watch: WatchClient = {
    async watch(path, query, callback, done) {
      const q: Record<string, string> = { watch: 'true' };
      for (const [k, v] of Object.entries(query)) if (v !== undefined) q[k] = String(v);
      const { r, exec } = await requestOf('GET', withQuery(path, q));
      return watchLines(r, callback, (err) => {
        if ((err as { code?: unknown } | null)?.code === 401 && exec !== undefined) who.refused(exec);
        done(err);
      });
    },
  };
  const list = async (what: string, path: string, query: Record<string, string>): Promise<ListResult> => {
    const raw = (await get(what, path, query)) as { items?: unknown[] | null; metadata?: { resourceVersion?: string } };
    return { items: raw.items ?? [], resourceVersion: raw.metadata?.resourceVersion ?? '' };
  };
  return {
    server: cluster.server!,
    listDeployments: (ns, fieldSelector) => list('list Deployments', `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments`, nonEmpty('fieldSelector', fieldSelector)),
    listPods: (ns, labelSelector) => list('list Pods', `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`, nonEmpty('labelSelector', labelSelector)),
    list: (what, path, query = {}) => list(what, path, query),
    get: (what, path, signal) => get(what, path, {}, signal).catch(gone),
    // (a log is read for a failure's evidence: bounded, not tried again, as the full client did)
    text: async (what, path, query, signal) => String(await withDeadline(what, send('GET', withQuery(path, query), undefined, 'text'), opts.requestMs, signal)),
    jsonPatch: (what, path, ops, fieldManager, signal) =>
      withDeadline(what, send('PATCH', withQuery(path, { fieldManager }), { type: 'application/json-patch+json', text: JSON.stringify(ops) }), opts.requestMs, signal),
    mergePatch: (what, path, patch, fieldManager, signal) =>
      withDeadline(what, send('PATCH', withQuery(path, { fieldManager }), { type: 'application/merge-patch+json', text: JSON.stringify(patch) }), opts.requestMs, signal),
    watch,
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
function requestJson(r: JsonRequest, answer: 'json' | 'text' = 'json'): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { code: res.statusCode, body }));
        if (answer === 'text') return resolvePromise(body);
        try {
          resolvePromise(JSON.parse(body));
        } catch (err) {
          reject(err);
        }
      });
    };
    openRequest(r, onResponse).on('error', reject);
  });
}

/** A watch ends when no byte came for this long (the server's own end comes first: timeoutSeconds). */
const WATCH_INACTIVITY_MS = 30_000;

/**
 * A watch request (`?watch=true`): each line of the answer is an event `{type, object}`, handed
 * to `callback`; `done` is called once, when the answer ends (null), fails, or is not 200 (an
 * error with `statusCode` and `code`, as list-watch.ts reads them), or after 30 s without a
 * byte (a `TimeoutError`). Resolves once the answer's status is known, with the controller
 * that ends it (as @kubernetes/client-node's Watch does).
 */
function watchLines(r: JsonRequest, callback: (type: string, obj: unknown) => void, done: (err: unknown) => void): Promise<AbortController> {
  const controller = new AbortController();
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  return new Promise((resolvePromise) => {
    const end = (err: unknown) => {
      if (ended) return;
      ended = true;
      if (timer) clearTimeout(timer);
      req.destroy();
      resolvePromise(controller);
      done(err);
    };
    const idle = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => end(Object.assign(new Error('the watch sent nothing for 30 s'), { name: 'TimeoutError' })), WATCH_INACTIVITY_MS);
      timer.unref();
    };
    controller.signal.addEventListener('abort', () => end(null), { once: true });
    idle();
    const req = openRequest(r, (res) => {
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => end(Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode, code: res.statusCode, body: Buffer.concat(chunks).toString('utf8') })));
        res.on('error', end);
        return;
      }
      resolvePromise(controller);
      let rest = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        idle();
        rest += chunk;
        let nl: number;
        while ((nl = rest.indexOf('\n')) >= 0) {
          const line = rest.slice(0, nl);
          rest = rest.slice(nl + 1);
          if (line.trim() === '') continue;
          try {
            const event = watchEventSchema.safeParse(JSON.parse(line));
            if (event.success) callback(event.data.type, event.data.object);
          } catch {
            // a line that is no JSON is left out, as the client's Watch does
          }
        }
      });
      res.on('end', () => end(null));
      res.on('close', () => end(null));
      res.on('error', end);
    });
    req.on('error', end);
  });
}

/** Sends `r` (straight, or through its proxy) and hands the answer to `onResponse`. */
function openRequest(r: JsonRequest, onResponse: (res: IncomingMessage) => void): ClientRequest {
  const host = r.server.hostname.replace(/^\[|\]$/g, '');
  const https = r.server.protocol === 'https:';
  const port = Number(r.server.port || (https ? 443 : 80));
  const headers: OutgoingHttpHeaders = {
    ...r.headers,
    ...(r.body ? { 'Content-Type': r.body.type, 'Content-Length': Buffer.byteLength(r.body.text) } : {}),
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
  req.end(r.body?.text);
  return req;
}

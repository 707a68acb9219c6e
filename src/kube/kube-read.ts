/**
 * Fast list requests for `deploy status`, a health check that must answer in well under two
 * seconds. @kubernetes/client-node loads about a thousand modules (its generated API and
 * models): 0.5 s on an idle 2-core host, 1.2-2 s under load, most of a status run (measured
 * with --cpu-prof: the ESM loader's own work). A list is one GET, so this reads the kubeconfig
 * itself for the common ways to reach a cluster (a CA, a client certificate and key, a bearer
 * token or token file, basic auth, as data or files) and answers with the API server's raw JSON,
 * as kube-api.ts does. A kubeconfig that needs more (an exec plugin, an auth provider, a proxy)
 * gets undefined, and the caller uses the full client (kube-api.ts), which supports them all.
 * https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/
 */
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { dirname, resolve } from 'node:path';
import { load } from 'js-yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { kubeconfigFile } from './api-error.js';
import { retryTransient, withDeadline } from '../deadline.js';
import type { ListResult } from './list-watch.js';

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

const KubeconfigSchema = z.looseObject({
  'current-context': z.string().optional(),
  contexts: z.array(z.looseObject({ name: z.string(), context: z.looseObject({ cluster: z.string(), user: z.string().optional() }) })).nullish(),
  clusters: z
    .array(
      z.looseObject({
        name: z.string(),
        cluster: z.looseObject({
          server: z.string(),
          'certificate-authority': z.string().optional(),
          'certificate-authority-data': z.string().optional(),
          'insecure-skip-tls-verify': z.boolean().optional(),
          'tls-server-name': z.string().optional(),
          'proxy-url': z.string().optional(),
        }),
      }),
    )
    .nullish(),
  users: z
    .array(
      z.looseObject({
        name: z.string(),
        user: z.looseObject({
          token: z.string().optional(),
          tokenFile: z.string().optional(),
          'client-certificate': z.string().optional(),
          'client-certificate-data': z.string().optional(),
          'client-key': z.string().optional(),
          'client-key-data': z.string().optional(),
          username: z.string().optional(),
          password: z.string().optional(),
          exec: z.unknown().optional(),
          'auth-provider': z.unknown().optional(),
        }),
      }),
    )
    .nullish(),
});

/** The lister of the kubeconfig's current context, or undefined when only the full client can reach it. */
export async function openKubeLister(env: NodeJS.ProcessEnv, opts: { readonly requestMs: number; readonly attempts: number }): Promise<KubeLister | undefined> {
  const file = kubeconfigFile(env);
  const where = `env KUBE_CONFIG_PATH (${file})`;
  let doc: unknown;
  try {
    doc = load(await readFile(file, 'utf8'));
  } catch (err) {
    throw new ConfigError('Cannot read the kubeconfig.', [{ where, message: (err as Error).message }], { cause: err });
  }
  const parsed = KubeconfigSchema.safeParse(doc);
  if (!parsed.success) return undefined; // the full client says what is wrong with it
  const kc = parsed.data;
  const context = kc.contexts?.find((c) => c.name === kc['current-context'])?.context;
  const cluster = kc.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  if (!context || !cluster) throw new ConfigError('The kubeconfig names no current cluster.', [{ where: file, message: 'current-context has no cluster' }]);
  const user = kc.users?.find((u) => u.name === context.user)?.user ?? {};
  if (user.exec !== undefined || user['auth-provider'] !== undefined || cluster['proxy-url'] !== undefined) return undefined;

  // paths in a kubeconfig are relative to its own directory
  const base = dirname(resolve(file));
  const fileOrData = async (path: string | undefined, data: string | undefined) =>
    data !== undefined ? Buffer.from(data, 'base64') : path !== undefined ? readFile(resolve(base, path)) : undefined;
  const server = new URL(cluster.server);
  const tls: RequestOptions = {
    ca: await fileOrData(cluster['certificate-authority'], cluster['certificate-authority-data']),
    cert: await fileOrData(user['client-certificate'], user['client-certificate-data']),
    key: await fileOrData(user['client-key'], user['client-key-data']),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
  };
  const token = user.token ?? (user.tokenFile ? (await readFile(resolve(base, user.tokenFile), 'utf8')).trim() : undefined);
  const authorization = token ? `Bearer ${token}` : user.username ? `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}` : undefined;
  const prefix = server.pathname.replace(/\/+$/, '');

  const get = (what: string, path: string, query: Record<string, string>) => {
    const q = new URLSearchParams(query).toString();
    return retryTransient(() => withDeadline(what, requestJson(server, 'GET', `${prefix}${path}${q ? `?${q}` : ''}`, tls, authorization), opts.requestMs), { attempts: opts.attempts });
  };
  const list = async (what: string, path: string, query: Record<string, string>): Promise<ListResult> => {
    const raw = (await get(what, path, query)) as { items?: unknown[] | null; metadata?: { resourceVersion?: string } };
    return { items: raw.items ?? [], resourceVersion: raw.metadata?.resourceVersion ?? '' };
  };
  const nonEmpty = (k: string, v: string): Record<string, string> => (v ? { [k]: v } : {});
  return {
    server: cluster.server,
    listDeployments: (ns, fieldSelector) => list('list Deployments', `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments`, nonEmpty('fieldSelector', fieldSelector)),
    listPods: (ns, labelSelector) => list('list Pods', `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`, nonEmpty('labelSelector', labelSelector)),
    list: (what, path, query = {}) => list(what, path, query),
    get: (what, path) =>
      get(what, path, {}).catch((err: { code?: unknown }) => {
        if (err.code === 404) return undefined;
        throw err;
      }),
    jsonPatch: (what, path, ops, fieldManager) =>
      withDeadline(what, requestJson(server, 'PATCH', `${prefix}${path}?${new URLSearchParams({ fieldManager })}`, tls, authorization, { type: 'application/json-patch+json', text: JSON.stringify(ops) }), opts.requestMs),
  };
}

/** One request; a status other than 200 is thrown as `{code, body}`, which describeApiError and isTransient read. */
function requestJson(server: URL, method: 'GET' | 'PATCH', path: string, tls: RequestOptions, authorization: string | undefined, body?: { type: string; text: string }): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    const options: RequestOptions = {
      host: server.hostname.replace(/^\[|\]$/g, ''),
      port: server.port || (server.protocol === 'http:' ? 80 : 443),
      path,
      method,
      headers: {
        Accept: 'application/json',
        ...(authorization ? { Authorization: authorization } : {}),
        ...(body ? { 'Content-Type': body.type, 'Content-Length': Buffer.byteLength(body.text) } : {}),
      },
      ...(server.protocol === 'https:' ? tls : {}),
    };
    const req = (server.protocol === 'http:' ? httpRequest : httpsRequest)(options, (res) => {
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
    });
    req.on('error', reject);
    req.end(body?.text);
  });
}

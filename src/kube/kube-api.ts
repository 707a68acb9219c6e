/**
 * The rollout's view of the Kubernetes API, through @kubernetes/client-node (imported only
 * when a rollout runs). The kubeconfig is read as kubectl and the OpenTofu kubernetes provider
 * read it (kubeconfig.ts: KUBE_CONFIG_PATH, else every file of KUBECONFIG merged; the context
 * of KUBE_CTX; the provider's KUBE_* overrides), and the client is given the one cluster and
 * user that come out of it, so the rollout step talks to the cluster the apply wrote to.
 * Objects are handed out raw (as JSON from the API server), for zod to parse at the boundary.
 *
 * The client honours `as` but not `as-groups`, `as-uid` nor `as-user-extra` (its User has
 * impersonateUser only); a tokenFile is read once, here, into the token.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import {
  AppsV1Api,
  CoreV1Api,
  Exec,
  KubeConfig,
  Observable,
  PatchStrategy,
  ResponseContext,
  SelfDecodingBody,
  Watch,
  setHeaderOptions,
  type ConfigurationOptions,
  type RequestContext,
} from '@kubernetes/client-node';
import { ConfigError } from '../errors.js';
import { retryTransient, statusCode, withDeadline } from '../deadline.js';
import type { ListResult, WatchClient } from './list-watch.js';
import type { JsonPatchOp } from './json-patch.js';
import type { ResolvedKubeconfig } from './kubeconfig-file.js';

/** One API request may take this long before the rollout treats the server as unreachable. */
const REQUEST_MS = 15_000;

export interface KubeApi {
  readonly watch: WatchClient;
  readonly server: string;
  readDeployment(namespace: string, name: string, signal?: AbortSignal): Promise<unknown | undefined>;
  listDeployments(namespace: string, fieldSelector: string): Promise<ListResult>;
  listReplicaSets(namespace: string, labelSelector: string): Promise<ListResult>;
  listPods(namespace: string, labelSelector: string): Promise<ListResult>;
  listEvents(namespace: string): Promise<ListResult>;
  listClaims(namespace: string): Promise<ListResult>;
  patchDeployment(namespace: string, name: string, ops: readonly JsonPatchOp[], fieldManager: string, signal?: AbortSignal): Promise<unknown>;
  /** Sets these annotations on a Deployment (a merge patch: the others stay). */
  annotateDeployment(namespace: string, name: string, annotations: Readonly<Record<string, string>>, fieldManager: string, signal?: AbortSignal): Promise<unknown>;
  readLogTail(namespace: string, pod: string, opts: { container: string; lines: number; previous: boolean }, signal?: AbortSignal): Promise<string[]>;
  /** Runs a read-only command in a running container; its stdout lines (bounded in time and size). */
  execLines(namespace: string, pod: string, container: string, command: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<string[]>;
}

const EXEC_MAX_BYTES = 64 * 1024;

/**
 * Calls a typed API method and returns the response body as the server sent it. The typed
 * client deserialises into its model classes, which turn timestamps into Dates and drop
 * fields its model does not know (a newer API server's); the watch hands out raw JSON, and
 * a rollback must write the previous template back whole. So a response middleware (public
 * API: ConfigurationOptions.middleware) keeps the body text and hands the client a copy.
 */
export async function callRaw(call: (options: ConfigurationOptions) => Promise<unknown>, extra?: ConfigurationOptions): Promise<unknown> {
  let text: string | undefined;
  const capture = {
    pre: (req: RequestContext) => new Observable(Promise.resolve(req)),
    post: (rsp: ResponseContext) =>
      new Observable(
        rsp.body.text().then((body) => {
          text = body;
          return new ResponseContext(rsp.httpStatusCode, rsp.headers, new SelfDecodingBody(Promise.resolve(Buffer.from(body))));
        }),
      ),
  };
  await call({ ...extra, middleware: [...(extra?.middleware ?? []), capture], middlewareMergeStrategy: 'append' });
  if (text === undefined) throw new Error('no response body');
  return JSON.parse(text);
}

function toListResult(raw: unknown): ListResult {
  const list = raw as { items?: unknown[] | null; metadata?: { resourceVersion?: string } };
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? '' };
}

/** The client's KubeConfig of the kubeconfig resolved once (kubeconfig.ts resolveKubeconfig). */
export function loadKubeConfig(k: ResolvedKubeconfig): KubeConfig {
  const { tokenFile, ...user } = k.user;
  if (tokenFile) {
    try {
      user.token = readFileSync(tokenFile, 'utf8').trim();
    } catch (err) {
      if (user.token === undefined) throw new ConfigError('Cannot read the kubeconfig.', [{ where: `${k.where}: user "${k.userName}": tokenFile`, message: (err as Error).message }], { cause: err });
    }
  }
  // the one cluster and user kubeconfig.ts chose, as a kubeconfig of its own (JSON is YAML)
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'deploy', cluster: k.cluster }],
    users: [{ name: 'deploy', user }],
    contexts: [{ name: 'deploy', context: { cluster: 'deploy', user: 'deploy' } }],
    'current-context': 'deploy',
  };
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(doc));
  } catch (err) {
    throw new ConfigError('Cannot read the kubeconfig.', [{ where: k.where, message: (err as Error).message }], { cause: err });
  }
  return kc;
}

/** How patient the client is: the rollout waits through a loaded server, `deploy status` answers fast. */
export interface KubeApiOptions {
  /** One request's deadline (default 15 s). */
  readonly requestMs?: number;
  /** Tries of a read after a transient failure (default 4: about a minute in all). */
  readonly readAttempts?: number;
}

export function createKubeApi(kc: KubeConfig, opts: KubeApiOptions = {}): KubeApi {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const server = kc.getCurrentCluster()?.server ?? '?';
  const exec = new Exec(kc);
  const requestMs = opts.requestMs ?? REQUEST_MS;
  const bounded = <T>(what: string, p: Promise<T>, signal?: AbortSignal) => withDeadline(what, p, requestMs, signal);
  // reads are idempotent: a transient failure (no answer in time, 5xx, a dropped connection)
  // is tried again a few times; writes (the rollback's patch) are not retried blindly
  const read = <T>(what: string, call: () => Promise<T>, signal?: AbortSignal) =>
    retryTransient(() => withDeadline(what, call(), requestMs, signal), { ...(signal ? { signal } : {}), ...(opts.readAttempts ? { attempts: opts.readAttempts } : {}) });
  return {
    watch: new Watch(kc),
    server,
    async readDeployment(namespace, name, signal) {
      try {
        return await read(`read Deployment ${namespace}/${name}`, () => callRaw((o) => apps.readNamespacedDeployment({ name, namespace }, o)), signal);
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
    async listDeployments(namespace, fieldSelector) {
      return toListResult(await read('list Deployments', () => callRaw((o) => apps.listNamespacedDeployment({ namespace, fieldSelector }, o))));
    },
    async listReplicaSets(namespace, labelSelector) {
      return toListResult(await read('list ReplicaSets', () => callRaw((o) => apps.listNamespacedReplicaSet({ namespace, labelSelector }, o))));
    },
    async listPods(namespace, labelSelector) {
      return toListResult(await read('list Pods', () => callRaw((o) => core.listNamespacedPod({ namespace, labelSelector }, o))));
    },
    async listEvents(namespace) {
      return toListResult(await read('list Events', () => callRaw((o) => core.listNamespacedEvent({ namespace }, o))));
    },
    async listClaims(namespace) {
      return toListResult(await read('list PersistentVolumeClaims', () => callRaw((o) => core.listNamespacedPersistentVolumeClaim({ namespace }, o))));
    },
    async patchDeployment(namespace, name, ops, fieldManager, signal) {
      return bounded(
        `patch Deployment ${namespace}/${name}`,
        callRaw((o) => apps.patchNamespacedDeployment({ name, namespace, body: ops, fieldManager }, o), setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)),
        signal,
      );
    },
    async annotateDeployment(namespace, name, annotations, fieldManager, signal) {
      return bounded(
        `annotate Deployment ${namespace}/${name}`,
        callRaw((o) => apps.patchNamespacedDeployment({ name, namespace, body: { metadata: { annotations } }, fieldManager }, o), setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
        signal,
      );
    },
    async readLogTail(namespace, pod, opts, signal) {
      const text = await bounded(
        `read the log of pod ${namespace}/${pod}`,
        core.readNamespacedPodLog({ name: pod, namespace, container: opts.container, tailLines: opts.lines, previous: opts.previous }),
        signal,
      );
      return String(text ?? '').split('\n').filter((l) => l.length > 0).slice(-opts.lines);
    },
    async execLines(namespace, pod, container, command, timeoutMs, signal) {
      let out = '';
      const sink = new Writable({
        write(chunk, _enc, cb) {
          if (out.length < EXEC_MAX_BYTES) out += String(chunk);
          cb();
        },
      });
      let socket: { close(): void } | undefined;
      const finished = new Promise<void>((resolve, reject) => {
        exec
          .exec(namespace, pod, container, [...command], sink, null, null, false, (status) => {
            if (status.status === 'Success' || status.status === 'Failure') resolve();
            else reject(new Error(status.message ?? 'exec failed'));
          })
          .then((ws) => {
            socket = ws;
            ws.on('close', () => resolve());
          }, reject);
      });
      try {
        await withDeadline(`exec in pod ${namespace}/${pod}`, finished, timeoutMs, signal);
      } finally {
        socket?.close();
      }
      return out.split('\n').filter((l) => l.length > 0);
    },
  };
}

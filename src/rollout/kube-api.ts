/**
 * The rollout's view of the Kubernetes API, through @kubernetes/client-node (imported only
 * when a rollout runs). The kubeconfig comes from KUBE_CONFIG_PATH, the variable the
 * OpenTofu kubernetes provider reads too (KUBECONFIG as a fallback). Objects are handed out
 * raw (as JSON from the API server), for zod to parse at the boundary.
 */
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';
// The typed API deserialises into classes (Date objects, `_exec` for `exec`); serialising
// back gives the JSON the server sent. Not in the package's index, but the package has no
// `exports` map and the version is pinned; test/unit/rollout/kube-api.test.ts guards it.
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { ConfigError, ToolError } from '../errors.js';
import { withDeadline } from './deadline.js';
import type { ListResult, WatchClient } from './list-watch.js';
import type { JsonPatchOp } from './undo-patch.js';

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
  readLogTail(namespace: string, pod: string, opts: { container: string; lines: number; previous: boolean }, signal?: AbortSignal): Promise<string[]>;
}

/** Serialises a typed object of the client back to the API's JSON. */
export function toRawObject(obj: unknown, type: string): unknown {
  return ObjectSerializer.serialize(obj, type, '');
}

function toListResult(list: { items: unknown[]; metadata?: { resourceVersion?: string } }, itemType: string): ListResult {
  return { items: list.items.map((i) => toRawObject(i, itemType)), resourceVersion: list.metadata?.resourceVersion ?? '' };
}

export function loadKubeConfig(env: NodeJS.ProcessEnv): KubeConfig {
  const file = env.KUBE_CONFIG_PATH || env.KUBECONFIG?.split(':')[0];
  if (!file) {
    throw new ConfigError('No kubeconfig for the rollout.', [
      { where: 'env KUBE_CONFIG_PATH', message: 'is not set (nor KUBECONFIG)' },
    ], { hint: 'Set KUBE_CONFIG_PATH to the kubeconfig of the cluster (the same file the apply uses).' });
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new ConfigError('Cannot read the kubeconfig.', [{ where: `env KUBE_CONFIG_PATH (${file})`, message: (err as Error).message }], { cause: err });
  }
  if (!kc.getCurrentCluster()) {
    throw new ConfigError('The kubeconfig names no current cluster.', [{ where: file, message: 'current-context has no cluster' }]);
  }
  return kc;
}

function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

/** What the API server answered, briefly (ApiException carries the Status body). */
export function describeApiError(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  let body = '';
  if (typeof e?.body === 'string') {
    try {
      body = (JSON.parse(e.body) as { message?: string }).message ?? e.body;
    } catch {
      body = e.body;
    }
  } else if (e?.body && typeof e.body === 'object') body = (e.body as { message?: string }).message ?? '';
  const code = statusCode(err);
  return `${code ? `HTTP ${code}: ` : ''}${body || e?.message || String(err)}`.split('\n')[0]!.slice(0, 500);
}

export function createKubeApi(kc: KubeConfig): KubeApi {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const server = kc.getCurrentCluster()?.server ?? '?';
  const bounded = <T>(what: string, p: Promise<T>, signal?: AbortSignal) => withDeadline(what, p, REQUEST_MS, signal);
  return {
    watch: new Watch(kc),
    server,
    async readDeployment(namespace, name, signal) {
      try {
        const d = await bounded(`read Deployment ${namespace}/${name}`, apps.readNamespacedDeployment({ name, namespace }), signal);
        return toRawObject(d, 'V1Deployment');
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
    async listDeployments(namespace, fieldSelector) {
      return toListResult(await bounded('list Deployments', apps.listNamespacedDeployment({ namespace, fieldSelector })), 'V1Deployment');
    },
    async listReplicaSets(namespace, labelSelector) {
      return toListResult(await bounded('list ReplicaSets', apps.listNamespacedReplicaSet({ namespace, labelSelector })), 'V1ReplicaSet');
    },
    async listPods(namespace, labelSelector) {
      return toListResult(await bounded('list Pods', core.listNamespacedPod({ namespace, labelSelector })), 'V1Pod');
    },
    async listEvents(namespace) {
      return toListResult(await bounded('list Events', core.listNamespacedEvent({ namespace })), 'CoreV1Event');
    },
    async listClaims(namespace) {
      return toListResult(await bounded('list PersistentVolumeClaims', core.listNamespacedPersistentVolumeClaim({ namespace })), 'V1PersistentVolumeClaim');
    },
    async patchDeployment(namespace, name, ops, fieldManager, signal) {
      const d = await bounded(
        `patch Deployment ${namespace}/${name}`,
        apps.patchNamespacedDeployment({ name, namespace, body: ops, fieldManager }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)),
        signal,
      );
      return toRawObject(d, 'V1Deployment');
    },
    async readLogTail(namespace, pod, opts, signal) {
      const text = await bounded(
        `read the log of pod ${namespace}/${pod}`,
        core.readNamespacedPodLog({ name: pod, namespace, container: opts.container, tailLines: opts.lines, previous: opts.previous }),
        signal,
      );
      return String(text ?? '').split('\n').filter((l) => l.length > 0).slice(-opts.lines);
    },
  };
}

/** Turns a failed request into the tool error of the rollout (exit code 3). */
export function apiToolError(what: string, server: string, err: unknown): ToolError {
  return new ToolError(`${what} failed against the API server ${server}: ${describeApiError(err)}`, {
    hint: 'Check that the cluster is up and KUBE_CONFIG_PATH points at it (`kubectl --kubeconfig "$KUBE_CONFIG_PATH" get nodes`).',
    cause: err,
  });
}

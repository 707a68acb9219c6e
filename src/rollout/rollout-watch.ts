/**
 * The watches of one node's rollout: its Deployment, ReplicaSets and pods (by the node's
 * `app.kubernetes.io/name` label), and the namespace's events and claims. Hands out parsed
 * snapshots; objects that do not parse are left out (and logged), never crash the wait.
 */
import { nodeSelector } from '../contract/pod-labels.js';
import type { Logger } from '../log.js';
import { ClaimSchema, DeploymentSchema, EventSchema, PodSchema, ReplicaSetSchema } from '../kube/api-objects.js';
import type { KubeApi } from '../kube/kube-api.js';
import { startListWatch, type ListWatchHandle } from '../kube/list-watch.js';
import type { RolloutSnapshot } from './snapshot.js';

export interface RolloutWatch {
  snapshot(): RolloutSnapshot;
  /** Why the snapshot may be stale: the API server has not answered for a while (or undefined). */
  staleness(now: number): string | undefined;
  /** Calls `cb` after every change; returns the unsubscribe function. */
  onChange(cb: () => void): () => void;
  stop(): Promise<void>;
}

/** A watch failing this long makes the snapshot suspect (said in a timeout's message). */
const STALE_AFTER_MS = 3_000;

export async function openRolloutWatch(api: KubeApi, namespace: string, node: string, logger?: Logger): Promise<RolloutWatch> {
  const listeners = new Set<() => void>();
  const onChange = () => {
    for (const cb of listeners) cb();
  };
  const selector = nodeSelector(node);
  const ns = encodeURIComponent(namespace);
  const common = { watch: api.watch, onChange, ...(logger ? { logger } : {}) };
  const handles: ListWatchHandle[] = [];
  try {
    const open = async (h: Promise<ListWatchHandle>) => {
      const handle = await h;
      handles.push(handle);
      return handle;
    };
    const [deployments, replicaSets, pods, events, claims] = await Promise.all([
      open(startListWatch({ ...common, name: 'deployments', path: `/apis/apps/v1/namespaces/${ns}/deployments`, fieldSelector: `metadata.name=${node}`, list: () => api.listDeployments(namespace, `metadata.name=${node}`) })),
      open(startListWatch({ ...common, name: 'replicasets', path: `/apis/apps/v1/namespaces/${ns}/replicasets`, labelSelector: selector, list: () => api.listReplicaSets(namespace, selector) })),
      open(startListWatch({ ...common, name: 'pods', path: `/api/v1/namespaces/${ns}/pods`, labelSelector: selector, list: () => api.listPods(namespace, selector) })),
      open(startListWatch({ ...common, name: 'events', path: `/api/v1/namespaces/${ns}/events`, list: () => api.listEvents(namespace) })),
      open(startListWatch({ ...common, name: 'claims', path: `/api/v1/namespaces/${ns}/persistentvolumeclaims`, list: () => api.listClaims(namespace) })),
    ]);
    const cache = new WeakMap<object, unknown>();
    const parseAll = <T>(raw: unknown[], schema: { safeParse(x: unknown): { success: true; data: T } | { success: false; error: unknown } }, kind: string): T[] => {
      const out: T[] = [];
      for (const r of raw) {
        if (r && typeof r === 'object' && cache.has(r)) {
          const hit = cache.get(r);
          if (hit !== undefined) out.push(hit as T);
          continue;
        }
        const p = schema.safeParse(r);
        if (p.success) out.push(p.data);
        else logger?.debug({ kind: 'rollout-object-skipped', objectKind: kind, err: String(p.error) }, 'skipping an object that does not parse');
        if (r && typeof r === 'object') cache.set(r, p.success ? p.data : undefined);
      }
      return out;
    };
    return {
      snapshot: () => ({
        deployment: parseAll(deployments.objects(), DeploymentSchema, 'Deployment').find((d) => d.metadata.name === node),
        replicaSets: parseAll(replicaSets.objects(), ReplicaSetSchema, 'ReplicaSet'),
        pods: parseAll(pods.objects(), PodSchema, 'Pod'),
        events: parseAll(events.objects(), EventSchema, 'Event'),
        claims: parseAll(claims.objects(), ClaimSchema, 'PersistentVolumeClaim'),
      }),
      staleness(now) {
        const since = Math.min(...handles.map((h) => h.failing()?.since ?? Number.POSITIVE_INFINITY));
        if (!Number.isFinite(since) || now - since < STALE_AFTER_MS) return undefined;
        const why = handles.map((h) => h.failing()?.message).find((m) => m !== undefined) ?? '';
        return `the API server has not answered the watch since ${new Date(since).toISOString()} (${why.split('\n')[0]})`;
      },
      onChange(cb) {
        listeners.add(cb);
        return () => listeners.delete(cb);
      },
      async stop() {
        await Promise.all(handles.map((h) => h.stop()));
      },
    };
  } catch (err) {
    await Promise.all(handles.map((h) => h.stop()));
    throw err;
  }
}

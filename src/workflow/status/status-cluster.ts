/**
 * What a target's namespace runs now, per node, for `deploy status`: two list requests (every
 * Deployment, every pod of ours), never one per node, so the answer costs the same for 2
 * nodes as for 50.
 */
import { LABEL_GROUP, LABEL_MANAGED_BY, LABEL_NAME, MANAGED_BY } from '../../contract/pod-labels.js';
import { CONTAINER_NAME } from '../../contract/node-container.js';
import { DeploymentSchema, findCondition, PodSchema, templateImage, type Pod } from '../../kube/api-objects.js';
import { apiToolError } from '../../kube/api-error.js';
import type { KubeLister } from '../../kube/kube-read.js';
import { readLastRollout, type LastRollout } from '../../rollout/last-rollout.js';

export interface ClusterPod {
  readonly name: string;
  /** When the pod was made (ISO), null when the API did not say. */
  readonly created: string | null;
  readonly ready: boolean;
  readonly restarts: number;
  /** The digest the container runs (its imageID), null before it started. */
  readonly runningImage: string | null;
  /** `running`, `waiting: <reason>`, `terminated: <reason>`, or the pod's phase. */
  readonly container: string;
}

export interface ClusterNode {
  readonly node: string;
  /** The image of the Deployment's pod template (`<repository>@sha256:...`). */
  readonly image: string | null;
  /** The Deployment carries our labels for this group (made by deploy's graph). */
  readonly group: string | null;
  readonly lastRollout: LastRollout | undefined;
  /** The newest of its pods that is not being deleted (Recreate: there is one). */
  readonly pod: ClusterPod | undefined;
}

/** The nodes of `namespace` that have a Deployment, by name. A namespace that is gone has none. */
export async function readClusterNodes(api: Pick<KubeLister, 'server' | 'listDeployments' | 'listPods'>, namespace: string): Promise<Map<string, ClusterNode>> {
  const [deployments, pods] = await Promise.all([
    api.listDeployments(namespace, '').catch((err: unknown) => {
      throw apiToolError(`Listing the Deployments of namespace ${namespace}`, api.server, err);
    }),
    api.listPods(namespace, `${LABEL_MANAGED_BY}=${MANAGED_BY}`).catch((err: unknown) => {
      throw apiToolError(`Listing the pods of namespace ${namespace}`, api.server, err);
    }),
  ]);
  const podsOf = new Map<string, Pod[]>();
  for (const raw of pods.items) {
    const parsed = PodSchema.safeParse(raw);
    if (!parsed.success || parsed.data.metadata.deletionTimestamp) continue;
    const node = parsed.data.metadata.labels?.[LABEL_NAME];
    if (!node) continue;
    podsOf.set(node, [...(podsOf.get(node) ?? []), parsed.data]);
  }
  const nodes = new Map<string, ClusterNode>();
  for (const raw of deployments.items) {
    const parsed = DeploymentSchema.safeParse(raw);
    if (!parsed.success) continue;
    const d = parsed.data;
    const newest = (podsOf.get(d.metadata.name) ?? []).sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))[0];
    const labels = d.metadata.labels ?? {};
    nodes.set(d.metadata.name, {
      node: d.metadata.name,
      image: templateImage(d.spec.template),
      group: labels[LABEL_MANAGED_BY] === MANAGED_BY ? (labels[LABEL_GROUP] ?? null) : null,
      lastRollout: readLastRollout(d.metadata.annotations),
      pod: newest && describePod(newest),
    });
  }
  return nodes;
}

function describePod(pod: Pod): ClusterPod {
  const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER_NAME) ?? pod.status?.containerStatuses?.[0];
  const state = status?.state;
  const container = state?.running
    ? 'running'
    : state?.waiting
      ? `waiting: ${state.waiting.reason ?? '?'}`
      : state?.terminated
        ? `terminated: ${state.terminated.reason ?? `exit ${state.terminated.exitCode}`}`
        : `pod ${pod.status?.phase ?? 'Pending'}`;
  return {
    name: pod.metadata.name,
    created: pod.metadata.creationTimestamp ?? null,
    ready: findCondition(pod.status?.conditions, 'Ready')?.status === 'True',
    restarts: status?.restartCount ?? 0,
    runningImage: status?.imageID || null,
    container,
  };
}

/**
 * `deploy status`'s verdict per node: the state (what deploy last applied) against the
 * cluster (what runs). Pure: the caller reads both.
 */
import type { LastRollout } from '../../rollout/last-rollout.js';
import type { ClusterNode } from './status-cluster.js';
import { digestOf, tagOf, type StateNode } from './nodes-in-state.js';

/**
 * - `ok`: its Deployment runs the state's image and its pod is ready on it;
 * - `rolled-back`: the Deployment was set back to an earlier image after a failed rollout (the state holds the failed one);
 * - `drift`: the Deployment runs an image the state does not hold, and no rollback explains it;
 * - `missing`: the state holds the node, the cluster has no Deployment of it (deleted by hand, namespace or cluster gone);
 * - `not-in-state`: a Deployment of this group in the namespace that the state does not hold;
 * - `not-ready`: the Deployment is as applied, but its pod is not ready on that image (no pod, not ready, a rollout going on).
 */
export const MARKS = ['ok', 'rolled-back', 'drift', 'missing', 'not-in-state', 'not-ready'] as const;
export type Mark = (typeof MARKS)[number];

export interface NodeStatus {
  readonly node: string;
  readonly mark: Mark;
  /** One sentence for people: what differs, and what to do. Empty for `ok`. */
  readonly words: string;
  /** What the state holds (null for `not-in-state`). */
  readonly state: { readonly image: string | null; readonly tag: string | null; readonly rolloutFailed: boolean } | null;
  /** What the cluster runs (null: no Deployment). */
  readonly cluster: {
    readonly image: string | null;
    readonly pod: string | null;
    readonly runningImage: string | null;
    readonly ready: boolean;
    readonly restarts: number | null;
    /** Seconds since the pod was made. */
    readonly podAgeSeconds: number | null;
    readonly container: string | null;
  } | null;
  readonly lastRollout: LastRollout | null;
}

/** `sha256:0123456789ab`: a digest short enough for a table. */
export function shortDigest(ref: string | null | undefined): string {
  if (!ref) return '-';
  const d = digestOf(ref);
  return d.startsWith('sha256:') ? d.slice(0, 'sha256:'.length + 12) : d;
}

function sameImage(a: string | null | undefined, b: string | null | undefined): boolean {
  return !!a && !!b && digestOf(a) === digestOf(b);
}

/** Every node of the state and every Deployment of the group in the namespace, judged; sorted by node. */
export function judgeNodes(group: string, stateNodes: readonly StateNode[], cluster: ReadonlyMap<string, ClusterNode>, nowMs: number): NodeStatus[] {
  const out = stateNodes.map((s) => judgeNode(s, cluster.get(s.node), nowMs));
  for (const c of cluster.values()) {
    if (c.group !== group || stateNodes.some((s) => s.node === c.node)) continue;
    out.push({
      node: c.node,
      mark: 'not-in-state',
      words: `a Deployment of group ${group} that the state does not hold (left behind, or made outside deploy): delete it, or add the node to the plan and apply`,
      state: null,
      cluster: clusterPart(c, nowMs),
      lastRollout: c.lastRollout ?? null,
    });
  }
  return out.sort((a, b) => a.node.localeCompare(b.node));
}

function clusterPart(c: ClusterNode, nowMs: number): NonNullable<NodeStatus['cluster']> {
  const created = c.pod?.created ? Date.parse(c.pod.created) : Number.NaN;
  return {
    image: c.image,
    pod: c.pod?.name ?? null,
    runningImage: c.pod?.runningImage ?? null,
    ready: c.pod?.ready ?? false,
    restarts: c.pod?.restarts ?? null,
    podAgeSeconds: Number.isFinite(created) ? Math.max(0, Math.round((nowMs - created) / 1000)) : null,
    container: c.pod?.container ?? null,
  };
}

function judgeNode(s: StateNode, c: ClusterNode | undefined, nowMs: number): NodeStatus {
  const state = { image: s.image, tag: s.tagRef ? tagOf(s.tagRef) : null, rolloutFailed: s.rolloutFailed };
  // (the keys in the order docs/status-and-history.md documents them)
  const cluster = c ? clusterPart(c, nowMs) : null;
  const status = (mark: Mark, words: string): NodeStatus => ({ node: s.node, mark, words, state, cluster, lastRollout: c?.lastRollout ?? null });
  if (!c) return status('missing', 'its Deployment is gone from the cluster (drift: deleted by hand, or the namespace or cluster made again): `deploy apply` makes it again, with its rollout step');
  const last = c.lastRollout;
  if (!sameImage(c.image, s.image)) {
    // the step tried the state's image and set the Deployment back (its report says so), or,
    // without a report, its step failed and the Deployment is not what was applied
    const rolledBack = (last !== undefined && last.outcome === 'rolled-back' && sameImage(last.image, s.image)) || (last === undefined && s.rolloutFailed);
    if (rolledBack) {
      const why = last ? ` at ${last.at}: ${last.message}` : '';
      return status(
        'rolled-back',
        `rolled back: runs the previous image ${shortDigest(c.image)}, the state holds ${shortDigest(s.image)}, whose rollout failed${why}. Fix the node's image or configuration and \`deploy apply\` again`,
      );
    }
    return status('drift', `its Deployment runs ${shortDigest(c.image)}, the state holds ${shortDigest(s.image)}: changed outside deploy (drift); \`deploy apply\` sets it back, with its rollout step`);
  }
  if (!c.pod) return status('not-ready', `its Deployment has no pod${failedRollout(last, s)}`);
  if (c.pod.runningImage && !sameImage(c.pod.runningImage, s.image)) {
    return status('not-ready', `pod ${c.pod.name} runs ${shortDigest(c.pod.runningImage)}, not yet ${shortDigest(s.image)} (a rollout is going on)`);
  }
  if (!c.pod.ready) return status('not-ready', `pod ${c.pod.name} is not ready (${c.pod.container}, ${c.pod.restarts} restarts)${failedRollout(last, s)}`);
  return status('ok', s.rolloutFailed ? 'ready, although its last rollout step failed: the next `deploy apply` runs it again' : '');
}

function failedRollout(last: LastRollout | undefined, s: StateNode): string {
  if (last && last.outcome !== 'ready' && sameImage(last.image, s.image)) return `; its last rollout (${last.at}) ended ${last.outcome}: ${last.message}`;
  return s.rolloutFailed ? '; its last rollout step failed' : '';
}

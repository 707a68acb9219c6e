/**
 * The labels of a node's Deployment and pod (stacks/pod-template.ts writes them; the rollout
 * step finds the pod by the name label, src/rollout/rollout-watch.ts), and the labels of the
 * target's other objects.
 */

/** The node's name: the Deployment's selector, and how the rollout step finds its pods. */
export const LABEL_NAME = 'app.kubernetes.io/name';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_GROUP = 'deploy.fediversity/group';
/** The value of LABEL_MANAGED_BY on everything the graph makes. */
export const MANAGED_BY = 'deploy';

/** The label selector of one node's pods (`app.kubernetes.io/name=<node>`). */
export function nodeSelector(node: string): string {
  return `${LABEL_NAME}=${node}`;
}

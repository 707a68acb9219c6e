/**
 * The one container of a node's pod (stacks/pod-template.ts): the rollout step reads its
 * status, its log and its journal by this name (src/rollout/).
 */
export const CONTAINER_NAME = 'node';

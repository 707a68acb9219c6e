/**
 * The server-side apply field managers of the two writers of a node's Deployment: the graph's
 * apply (stacks/node.ts, with force, so that it takes the fields back after a rollback) and the
 * rollout step's rollback (src/rollout/undo-patch.ts).
 */
export const FIELD_MANAGER = 'deploy';
/** The field manager of the rollout step's writes: the rollback, and the last-rollout annotation (the apply's own manager is FIELD_MANAGER). */
export const ROLLBACK_FIELD_MANAGER = 'deploy-rollout';

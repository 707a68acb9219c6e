/**
 * The JSON patch operations (RFC 6902) deploy writes to the API server: the rollback's
 * (src/rollout/undo-patch.ts) and the ownership step's removals of hand edits. A type of the
 * client, so that the client (kube-api.ts) need not import the rollout that builds them.
 */

/** The rollback's operations. */
export type UndoPatchOp = { op: 'replace' | 'test'; path: string; value: unknown };
/** A JSON patch operation of the writes deploy makes: the rollback's, the ownership step's (removals, a spec written whole, map entries set again). */
export type JsonPatchOp = UndoPatchOp | { op: 'remove'; path: string } | { op: 'add'; path: string; value: unknown };

/**
 * The root outputs of a target's graph (stacks/target-stack.ts), read back from the state or
 * a saved plan by src/workflow/ (node-names.ts: FR-009; target-planner.ts: the submission rule).
 */
/** The node names of the target, a list of strings (FR-009). */
export const NODE_NAMES_OUTPUT = 'node_names';
/** The namespace the target runs in. */
export const TARGET_NAMESPACE_OUTPUT = 'target_namespace';
/** The submission id the state belongs to (`''` for none). */
export const SUBMISSION_OUTPUT = 'submission';

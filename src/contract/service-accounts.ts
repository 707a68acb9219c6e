/**
 * The service accounts the graph makes and others name: each node's pod runs as
 * `node-<node>` (stacks/node.ts), which its SPIRE registration entries select
 * (`agent_sa:node-<node>`, src/contract/spire/spire-names.ts); the spire node reviews tokens as
 * `spire-server` (stacks/spire-identity.ts).
 */

/** The service account of a node's pod. */
export function nodeServiceAccount(node: string): string {
  return `node-${node}`;
}

/** The service account whose token the spire node uses to review tokens and read nodes/pods. */
export const SPIRE_SERVER_ACCOUNT = 'spire-server';

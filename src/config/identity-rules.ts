/**
 * Workload identity: the roster's spiffe provider and the SPIRE coordinates must agree, and a
 * node that declares `identity: true` needs both (the specification's edge case "no roster has
 * a spiffe provider"). Pure: the plan and the coordinates in, every problem out.
 *
 * Why both sides: the roster says, in the plan, which spire node gives the group its
 * identities; K8S_SPIRE_NODE (and the ssh coordinates) say, per run, how to reach it. With
 * one and not the other a run used to go ahead without SPIRE, or with it for a group whose
 * plan names no provider, and nothing said so.
 */
import type { InputIssue } from '../errors.js';
import type { GroupPlan } from './plan-schema.js';

const SPIRE_COORDINATES_HINT = 'K8S_SPIRE_NODE with SSH_USER, SSH_PRIVATE_KEY_FILE and SSH_NODES';

/**
 * `spireNode`: K8S_SPIRE_NODE when the SPIRE coordinates are set, else undefined. `at` makes
 * the `file:$.path` of a plan field.
 */
export function identityProblems(plan: GroupPlan, spireNode: string | undefined, at: (path: readonly PropertyKey[]) => string): InputIssue[] {
  const issues: InputIssue[] = [];
  const provider = plan.roster.spiffeProvider;
  const providerName = provider ? `${provider.group}/${provider.node}` : undefined;
  const missing: string[] = [];
  if (providerName === undefined) missing.push('the roster names no spiffe provider (roster.spiffeProvider is null)');
  if (spireNode === undefined) missing.push(`the SPIRE coordinates are not set (${SPIRE_COORDINATES_HINT})`);

  // a node the submission turns off is in no graph: its need is no run's concern
  const off = new Set(plan.submission?.turnsOff ?? []);
  for (const [name, node] of Object.entries(plan.nodes)) {
    if (!node.identity || off.has(name) || missing.length === 0) continue;
    issues.push({
      where: at(['nodes', name, 'identity']),
      message: `node "${name}" needs a workload identity, and ${missing.join(', and ')}: name the spire node of the central group in roster.spiffeProvider and set ${SPIRE_COORDINATES_HINT} to reach it, or run the node without "identity": true`,
    });
  }

  if (providerName !== undefined && spireNode === undefined) {
    issues.push({
      where: `${at(['roster', 'spiffeProvider'])} and K8S_SPIRE_NODE`,
      message: `the roster names the spiffe provider "${providerName}", but K8S_SPIRE_NODE is not set, so the nodes would get no identity: set ${SPIRE_COORDINATES_HINT} to reach ${providerName}, or set roster.spiffeProvider to null`,
    });
  } else if (providerName === undefined && spireNode !== undefined) {
    issues.push({
      where: `${at(['roster', 'spiffeProvider'])} and K8S_SPIRE_NODE`,
      message: `K8S_SPIRE_NODE is "${spireNode}", but the roster names no spiffe provider (roster.spiffeProvider is null): name that spire node in the roster, e.g. {"group": "central", "node": "spire"}, or unset K8S_SPIRE_NODE`,
    });
  }
  return issues;
}

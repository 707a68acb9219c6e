/**
 * The values of bench/helm-chart for a group: the same nodes, claims, service accounts,
 * NetworkPolicy and pod as deploy's graph writes for them (stacks/target-stack.ts,
 * stacks/node.ts, stacks/pod-template.ts), for the Helm side of P2, P6 and P10. Pure: objects in,
 * values out (the probe scripts are bench/lib/probe-values.ts's file).
 */
// Only leaf modules of src/ here: bench/ runs under node's type stripping, which does not map
// src/'s `.js` imports to their `.ts` files (durations and names come from dist/: helm-group.ts).
import { LIVENESS_PERIOD_FACTOR, MAX_ROLLOUT_TIMEOUT_SECONDS, STARTUP_FAILURE_THRESHOLD } from '../../src/contract/probes.ts';

/** One node of the release: its Deployment's name, its image (pinned by digest) and its machine ID. */
export interface HelmNode {
  readonly name: string;
  readonly image: string;
  readonly machineId: string;
}

/** A group's Deployments (the items of `kubectl get deployments -o json`) as Helm nodes. */
export function nodesOfDeployments(items: readonly any[]): HelmNode[] {
  return items.map((d) => {
    const c = d.spec.template.spec.containers[0];
    const machineId = c.env?.find((e: any) => e.name === 'container_uuid')?.value;
    if (typeof c.image !== 'string' || typeof machineId !== 'string') throw new Error(`the Deployment ${d.metadata?.name} has no image or no container_uuid`);
    return { name: d.metadata.name, image: c.image, machineId };
  });
}

/** How deploy ran the group, as numbers (bench/lib/helm-group.ts reads them as deploy does). */
export interface GroupSettings {
  readonly group: string;
  /** the name of the target's NetworkPolicy (src/config/names.ts) */
  readonly networkPolicyName: string;
  /** --probe-period and --stop-timeout, in seconds */
  readonly probePeriodSeconds: number;
  readonly stopTimeoutSeconds: number;
}

/**
 * The chart's values for these nodes as deploy's graph would have them: the group label, the
 * target's NetworkPolicy, and the pod's timings of stacks/pod-template.ts (the progress deadline
 * and the startup probe's bound at deploy's ceiling, readiness every probe period, liveness
 * LIVENESS_PERIOD_FACTOR times that, the grace period of the stop timeout).
 */
export function groupValues(nodes: readonly HelmNode[], settings: GroupSettings): Record<string, unknown> {
  return {
    nodes,
    group: settings.group,
    networkPolicy: true,
    networkPolicyName: settings.networkPolicyName,
    progressDeadlineSeconds: MAX_ROLLOUT_TIMEOUT_SECONDS,
    startupFailureThreshold: STARTUP_FAILURE_THRESHOLD,
    readinessPeriodSeconds: settings.probePeriodSeconds,
    livenessPeriodSeconds: LIVENESS_PERIOD_FACTOR * settings.probePeriodSeconds,
    terminationGracePeriodSeconds: settings.stopTimeoutSeconds,
  };
}

/** The nodes with `changed` given `image`, the others as they were; a name not in the group is an error. */
export function withImage(nodes: readonly HelmNode[], changed: readonly string[], image: string): HelmNode[] {
  const known = new Set(nodes.map((n) => n.name));
  const unknown = changed.filter((n) => !known.has(n));
  if (unknown.length) throw new Error(`not nodes of the release: ${unknown.join(', ')}`);
  const set = new Set(changed);
  return nodes.map((n) => (set.has(n.name) ? { ...n, image } : n));
}

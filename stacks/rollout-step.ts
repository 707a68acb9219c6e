/**
 * The shell of a node's rollout step, run by tofu as a local-exec after the Deployment:
 * `deploy rollout` (src/cli/rollout.ts) for the node, with the target's rollout timeout.
 * DEPLOY_BIN is the deploy of the run (its environment), so the step runs the same program.
 * The text is part of the graph (test/unit/stacks/target-stack-scripts.test.ts pins it).
 */
import type { Duration } from '../src/config/duration.js';
import { shq } from '../src/contract/shell.js';

export function rolloutStepCommand(namespace: string, node: string, timeout: Duration): string {
  return `"\${DEPLOY_BIN:-deploy}" rollout --namespace ${shq(namespace)} --node ${shq(node)} --timeout ${timeout.text}`;
}

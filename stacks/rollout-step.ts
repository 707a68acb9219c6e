/**
 * The shell of a node's rollout step, run by tofu as a local-exec after the Deployment:
 * `deploy rollout` (src/cli/rollout.ts) for the node. DEPLOY_BIN is the deploy of the run (its
 * environment), so the step runs the same program.
 *
 * The rollout timeout is the run's (DEPLOY_ROLLOUT_TIMEOUT in tofu's environment,
 * src/workflow/target/target-session.ts), never a word of the graph: it is a value the operator sets per
 * run (FR-006), and a value in the graph changes every node's blocks when it changes (a full
 * plan, and before that a new pod template for every node). Run by hand without it, the step
 * takes deploy's default. The text is part of the graph
 * (test/unit/stacks/target-stack-scripts.test.ts pins it).
 */
import { DURATION_RULES } from '../src/config/duration.js';
import { ROLLOUT_TIMEOUT_ENV } from '../src/contract/rollout-step-env.js';
import { shq } from '../src/contract/shell.js';

export function rolloutStepCommand(namespace: string, node: string): string {
  return `"\${DEPLOY_BIN:-deploy}" rollout --namespace ${shq(namespace)} --node ${shq(node)} --timeout "\${${ROLLOUT_TIMEOUT_ENV}:-${DURATION_RULES.rolloutTimeout.defaultText}}"`;
}

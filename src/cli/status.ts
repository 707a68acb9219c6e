/**
 * `deploy status`: read-only and fast; per node, what its state holds against what the
 * cluster runs. The exit code is a health check for CD.
 */
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT_CODES_HELP } from './help/exit-codes-help.js';
import { collectTargets, namespaceToCheck, SHARED_FLAGS } from './inputs.js';

const STATUS_HELP = `
What it reads, and nothing else (no tofu, no lock, no change):
  - each chosen target's state, from the backend plan/apply use: TF_HTTP_ADDRESS (and
    TF_HTTP_USERNAME/TF_HTTP_PASSWORD) when set, else the embedded backend's directory
    under DEPLOY_STATE_DIR; its serial, and who holds its lock (a run in flight);
  - the cluster (KUBE_CONFIG_PATH or --kubeconfig): the Deployments and pods of each
    target's namespace (the namespace the state holds), two list requests per target.

Per node: MARK, the image the state holds and the one the pod runs (by digest), READY,
RESTARTS, POD AGE, and the last rollout (outcome, when, reason), which the rollout step
writes on the Deployment (annotation deploy.fediversity/last-rollout), so any machine sees it.
MARK is one of:
  ok            ready, and runs the image its state holds
  ROLLED-BACK   its rollout failed and the Deployment was set back: the pod runs the
                previous image, the state holds the failed one
  DRIFT         the Deployment runs an image the state does not hold (changed outside deploy)
  MISSING       the state holds the node, the cluster has no Deployment of it
  NOT-IN-STATE  a Deployment of the group in the namespace that the state does not hold
  NOT-READY     as applied, but its pod is not ready on that image (or has no pod)
A sentence under the table says, for each node that is not ok, what differs and what to do.

Examples:
  deploy status                       # target all, of ./group.json
  deploy status -t '*' --json         # every target with a state, one JSON document
  deploy status && echo healthy       # a CD health check: exit 0 only when all is ok

Exit codes: 0 every node ok; 7 a node is not ok (the table says which); 2 bad input, an
unknown target, or no state for a chosen target (wrong backend?); 3 the state backend or the
API server could not be read (the message names it).`;

export function registerStatus(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description("per node: the image its state holds and the one the cluster runs (by digest), Ready, restarts, pod age, the last rollout; marks what differs. Read-only; exit 0 only when every node is ready and matches")
    .option(SHARED_FLAGS.plan, 'the group plan (its group and targets)', 'group.json')
    .option(SHARED_FLAGS.target, "a target: all or an app; repeat for several, '*' for every target that has a state (default: all)", collectTargets)
    .option(SHARED_FLAGS.namespace, 'the namespace the targets were applied in, as for plan (all: <name>, an app: <name>-<app>); a state that holds another is an error, exit 2 (default: K8S_NAMESPACE, else the namespace each state holds)')
    .option(SHARED_FLAGS.kubeconfig, 'kubeconfig of the cluster (default: KUBE_CONFIG_PATH)')
    .option(SHARED_FLAGS.json, 'write one JSON document on stdout (docs/status-and-history.md describes its fields)')
    .addHelpText('after', STATUS_HELP + '\n' + EXIT_CODES_HELP)
    .action(async (flags: { plan: string; target?: string[]; namespace?: string; kubeconfig?: string; json?: boolean }) => {
      const { readStatus } = await import('../workflow/status/status.js');
      const { parseBackendCoordinates } = await import('../config/backend-coordinates.js');
      const { reportStatus } = await import('./report/status-report.js');
      const result = await readStatus({ plan: flags.plan, target: flags.target, kubeconfig: flags.kubeconfig, namespace: namespaceToCheck(flags.namespace, ctx.env), backend: parseBackendCoordinates(ctx.env) }, ctx);
      reportStatus(ctx, result, flags.json);
      ctx.exitCode = result.exitCode;
    });
}

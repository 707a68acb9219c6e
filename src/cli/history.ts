/** `deploy history <target>`: the versions of a target's state and what each changed per node. */
import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from './context.js';
import { ConfigError } from '../errors.js';
import { EXIT_CODES_HELP } from './help/exit-codes-help.js';
import { collectTargets, namespaceToCheck, SHARED_FLAGS } from './inputs.js';

const HISTORY_HELP = `
Reads every kept version of the state <group>-<target> (from TF_HTTP_ADDRESS when set, else
the embedded backend under DEPLOY_STATE_DIR; a shared backend needs \`deploy state serve\`,
which keeps and lists versions) and compares each with the one before, per node:
  added / removed                      the node entered or left the target
  image <digest> -> <digest> (tag)     a new image was applied
  its rollout failed / passed          the rollout step was tainted, or passed again
  NEW MACHINE ID, /var/lib claim made again
A run may store several versions (tofu saves as it goes); "no node changed" marks those
that touched nothing of a node. The last lines say when each node's image last changed.
Read-only: no tofu, no lock, no cluster.

Examples:
  deploy history all
  deploy history web --last 5 --json

Exit codes: 0 shown; 2 no state for that target here, or bad input; 3 the backend failed.`;

function parseCount(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
}

/** The one target of `deploy history`: the argument or --target, not both different, not several. */
function oneTarget(positional: string | undefined, flagged: string[] | undefined): string {
  const given = [...new Set([...(positional ? [positional] : []), ...(flagged ?? [])])];
  if (given.length === 1 && given[0] !== '*') return given[0]!;
  throw new ConfigError('deploy history needs one target', [
    {
      where: '<target>/--target',
      message: given.length === 0 ? 'name it: deploy history all (or --target all)' : `one state's history at a time; given: ${given.join(', ')}`,
    },
  ]);
}

export function registerHistory(program: Command, ctx: CliContext): void {
  program
    .command('history')
    .description("the versions of a target's state, oldest first: time, serial, and what each changed per node (image, added, removed, rollout failed); when each node last changed image")
    .argument('[target]', 'the target: all, or an app of the plan (or --target)')
    .option(SHARED_FLAGS.plan, 'the group plan (its group)', 'group.json')
    .option(SHARED_FLAGS.target, 'the target, as for plan (one: the history is of one state)', collectTargets)
    .option(SHARED_FLAGS.namespace, 'the namespace the target was applied in, as for plan; a state whose newest version holds another is an error, exit 2 (default: K8S_NAMESPACE, else not checked)')
    .option('--last <n>', 'only the newest n versions', parseCount)
    .option(SHARED_FLAGS.json, 'write one JSON document on stdout (docs/status-and-history.md describes its fields)')
    .addHelpText('after', HISTORY_HELP + '\n' + EXIT_CODES_HELP)
    .action(async (positional: string | undefined, flags: { plan: string; target?: string[]; namespace?: string; last?: number; json?: boolean }) => {
      const target = oneTarget(positional, flags.target);
      const { readHistory } = await import('../workflow/status/history.js');
      const { parseBackendCoordinates } = await import('../config/backend-coordinates.js');
      const { reportHistory } = await import('./report/history-report.js');
      reportHistory(ctx, await readHistory(target, { plan: flags.plan, last: flags.last, namespace: namespaceToCheck(flags.namespace, ctx.env), backend: parseBackendCoordinates(ctx.env) }, ctx), flags.json);
    });
}

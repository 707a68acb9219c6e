/** `deploy history <target>`: the versions of a target's state and what each changed per node. */
import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT_CODES_HELP } from './exit-codes-help.js';

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

export function registerHistory(program: Command, ctx: CliContext): void {
  program
    .command('history')
    .description("the versions of a target's state, oldest first: time, serial, and what each changed per node (image, added, removed, rollout failed); when each node last changed image")
    .argument('<target>', 'the target: all, or an app of the plan')
    .option('-p, --plan <file>', 'the group plan (its group)', 'group.json')
    .option('--last <n>', 'only the newest n versions', parseCount)
    .option('--json', 'write one JSON document on stdout (the README describes its fields)')
    .addHelpText('after', HISTORY_HELP + '\n' + EXIT_CODES_HELP)
    .action(async (target: string, flags: { plan: string; last?: number; json?: boolean }) => {
      const { readHistory } = await import('../workflow/history.js');
      const { reportHistory } = await import('./history-report.js');
      reportHistory(ctx, await readHistory(target, flags, ctx), flags.json);
    });
}

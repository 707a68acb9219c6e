/**
 * The input flags shared by synth, plan, apply and destroy. Their resolution into target
 * models is src/config/load-targets.ts; the run is src/workflow/run-verb.ts.
 */
import { Option, type Command } from 'commander';
import { COORDINATES } from '../config/coordinate-table.js';
import type { VerbInputs } from '../workflow/run-verb.js';
import { ENVIRONMENT_HELP } from './environment-help.js';
import { EXIT_CODES_HELP } from './exit-codes-help.js';

/** The flags as commander gives them (camelCase). */
export type InputFlags = VerbInputs;

export function addInputOptions(cmd: Command): Command {
  cmd
    .option('-p, --plan <file>', 'the group plan (JSON, see examples/group.json)', 'group.json')
    .option(
      '-t, --target <target>',
      `a target: "all" (every node, in K8S_NAMESPACE) or an app name (its nodes, in <namespace>-<app>); repeat the flag for several, '*' for every target (default: all only, so that each node runs once)`,
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    );
  for (const c of COORDINATES) cmd.addOption(new Option(c.flag, c.help));
  cmd.option('-o, --out <dir>', 'where graph directories are written (default: $DEPLOY_STATE_DIR/graphs)');
  cmd.option('--json', 'write the result as JSON on stdout');
  cmd.addHelpText('after', ENVIRONMENT_HELP + '\n' + EXIT_CODES_HELP);
  return cmd;
}

/**
 * The input flags shared by synth, plan, apply and destroy. Their resolution into target
 * models is src/config/load-targets.ts; the run is src/workflow/run-verb.ts.
 */
import { Option, type Command } from 'commander';
import { COORDINATES } from '../config/coordinate-table.js';
import type { VerbInputs } from '../workflow/run-verb.js';
import { ENVIRONMENT_HELP } from './help/environment-help.js';
import { EXIT_CODES_HELP } from './help/exit-codes-help.js';

/** The flags as commander gives them (camelCase). */
export type InputFlags = VerbInputs;

/**
 * The flags that name one concept, spelled the same on every verb that takes it (plan, apply,
 * destroy, status, history): `-p/--plan`, `-t/--target`, `--namespace`, `--kubeconfig`,
 * `--json`. A verb gives its own words where the meaning narrows (status reads a namespace).
 */
export const SHARED_FLAGS = {
  plan: '-p, --plan <file>',
  target: '-t, --target <target>',
  namespace: COORDINATES.find((c) => c.key === 'namespace')!.flag,
  kubeconfig: COORDINATES.find((c) => c.key === 'kubeconfig')!.flag,
  json: '--json',
} as const;

/** Every --target given, in order. */
export function collectTargets(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function addInputOptions(cmd: Command): Command {
  cmd
    .option(SHARED_FLAGS.plan, 'the group plan (JSON, see examples/group.json)', 'group.json')
    .option(
      SHARED_FLAGS.target,
      `a target: "all" (every node, in K8S_NAMESPACE) or an app name (its nodes, in <namespace>-<app>); repeat the flag for several, '*' for every target (default: all only, so that each node runs once)`,
      collectTargets,
    );
  for (const c of COORDINATES) cmd.addOption(new Option(c.flag, c.help));
  cmd.option('-o, --out <dir>', 'where graph directories are written (default: $DEPLOY_STATE_DIR/graphs)');
  cmd.option('--json', 'write the result as JSON on stdout');
  cmd.addHelpText('after', ENVIRONMENT_HELP + '\n' + EXIT_CODES_HELP);
  return cmd;
}

/** The namespace a reading verb checks the states against: --namespace, else K8S_NAMESPACE, else none. */
export function namespaceToCheck(flag: string | undefined, env: NodeJS.ProcessEnv): { name: string; from: string } | undefined {
  if (flag) return { name: flag, from: '--namespace' };
  if (env.K8S_NAMESPACE) return { name: env.K8S_NAMESPACE, from: 'K8S_NAMESPACE' };
  return undefined;
}

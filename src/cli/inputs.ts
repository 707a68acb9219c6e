/**
 * The input flags shared by synth, plan, apply and destroy, and their resolution into
 * target models (parse -> normalise -> rules; every problem at once).
 */
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { COORDINATES, SPIRE_COORDINATES, type CoordinateFlags } from '../config/coordinate-table.js';
import type { TargetModel } from '../config/target-model.js';
import type { Coordinates } from '../config/coordinates.js';
import { defaultGraphsDir } from '../paths.js';
import type { CliContext } from './context.js';
import { EXIT_CODES_HELP } from './exit-codes-help.js';

export interface InputFlags extends CoordinateFlags {
  plan: string;
  /** Every --target given, in order (the flag may repeat); undefined when none. */
  target?: string[];
  out?: string;
  json?: boolean;
  /** plan, apply: nodes whose /var/lib claim may go (allow-volume-replacement.ts). */
  allowVolumeReplacement?: string[];
}

export const ENVIRONMENT_HELP = `
Environment (flags override it):
${COORDINATES.map((c) => `  ${c.env.padEnd(24)} ${c.help}`).join('\n')}
  K8S_REGISTRY_TLS_VERIFY  false for a plain-http registry (default: true)
  REGISTRY_AUTH_FILE       registry credentials (containers-auth.json), read by skopeo only
  TF_HTTP_ADDRESS          an OpenTofu http state backend (base address: <address>/<group>-<target>); unset: the embedded one
  DEPLOY_STATE             "embedded": allow the embedded backend where CI, GITHUB_ACTIONS or FORGEJO_ACTIONS
                           is set (plan/apply/destroy refuse it there, exit 2: a runner's home may not last)
  DEPLOY_STATE_DIR         where graphs and embedded state live (default: ~/.local/state/k8s-deployer)
  DEPLOY_RUN_ID            this run's name on its state lock (default: user@host:pid); see deploy state unlock --help
  DEPLOY_LOG_LEVEL         trace|debug|info|warn|error (default: info)
  DEPLOY_TOFU, DEPLOY_SKOPEO  program paths (default: the cache, then PATH); every program
                           is checked before the run starts (exit 3 naming what is missing)
  DEPLOY_PROVIDERS         download: tofu init downloads the providers (default: the cache's mirror)

Workload identity with SPIRE (off unless K8S_SPIRE_NODE is set; see the README). The plan's
roster.spiffeProvider must name the spire node exactly when K8S_SPIRE_NODE is set, and a node
with "identity": true needs both (else exit 2, naming the node):
${SPIRE_COORDINATES.map((c) => `  ${c.env.padEnd(24)} ${c.help}`).join('\n')}
  DEPLOY_SSH               the ssh the SPIRE steps use (default: found on PATH; Debian: openssh-client)
  DEPLOY_KUBECTL           the kubectl that makes the spire-server token (default: the cache, then PATH)`;

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

/**
 * Plan file + coordinates -> the models of the chosen targets, every target name of the group
 * (`groupTargets`) and the coordinates (for what stays out of the graph, like the kubeconfig
 * path); throws ConfigError with every problem.
 */
export async function loadTargets(flags: InputFlags, ctx: CliContext): Promise<{ targets: TargetModel[]; groupTargets: string[]; coordinates: Coordinates }> {
  const { readGroupPlan, loadCoordinates, buildTargets, targetsOf } = await import('../config/load.js');
  const file = resolve(ctx.cwd, flags.plan);
  // read both, then report the problems of both at once
  const [plan, coords] = await Promise.allSettled([readGroupPlan(file), Promise.resolve().then(() => loadCoordinates(flags, ctx.env))]);
  if (plan.status === 'rejected' && coords.status === 'rejected') {
    const { ConfigError } = await import('../errors.js');
    const a = plan.reason as InstanceType<typeof ConfigError>;
    const b = coords.reason as InstanceType<typeof ConfigError>;
    if (a instanceof ConfigError && b instanceof ConfigError) {
      throw new ConfigError('the group plan and the coordinates have problems', [...a.issues, ...b.issues], { hint: 'fix each line above; nothing was changed' });
    }
  }
  if (plan.status === 'rejected') throw plan.reason;
  if (coords.status === 'rejected') throw coords.reason;
  return { targets: buildTargets(plan.value, coords.value, file, flags.target), groupTargets: targetsOf(plan.value), coordinates: coords.value };
}

export function graphsDir(flags: InputFlags, ctx: CliContext): string {
  return flags.out ? resolve(ctx.cwd, flags.out) : defaultGraphsDir(ctx.env);
}

/**
 * `deploy rollout`: the rollout step the graph runs after it applied a node's Deployment
 * (see src/rollout/). Waits for the new pod, explains a failure, rolls back, writes the
 * report into the run directory, and exits with the outcome's code.
 */
import { Command, Option } from 'commander';
import { DEFAULT_ROLLOUT_TIMEOUT, DURATION_RULES, readDuration, type Duration } from '../config/duration.js';
import { SOAK_ENV } from '../contract/rollout-step-env.js';
import { ConfigError, type InputIssue } from '../errors.js';
import type { CliContext } from './context.js';

interface RolloutFlags {
  namespace: string;
  node: string;
  timeout: Duration;
  rollbackTimeout: Duration;
  soak: Duration;
  reportDir?: string;
  json?: boolean;
}

export function registerRollout(program: Command, ctx: CliContext): void {
  program
    .command('rollout')
    .description(
      "Wait for a node's new pod to become ready; on a terminal failure (systemd degraded, image pull, " +
        'unschedulable, ...) or at the timeout, explain it and set the Deployment back to the previous revision.',
    )
    .requiredOption('--namespace <ns>', 'namespace of the node')
    .requiredOption('--node <name>', 'the node (the Deployment name)')
    .addOption(new Option('--timeout <duration>', 'how long the new pod may take to become ready').default(DEFAULT_ROLLOUT_TIMEOUT.text))
    .addOption(new Option('--rollback-timeout <duration>', 'how long the previous pod may take after a rollback (default: --timeout)'))
    .addOption(new Option('--soak <duration>', `how long the pod must stay running once ready (no fall of readiness, no container restart, the same pod) before the rollout counts; a fall is rolled back like a failed boot (default: env ${SOAK_ENV}, else 0, none)`))
    .option('--report-dir <dir>', 'where to write rollout-<ns>-<node>.json (default: env DEPLOY_RUN_DIR, else no file)')
    .option('--json', 'print the report as JSON on stdout')
    .addHelpText(
      'after',
      '\nExit codes: 0 ready; 4 failed and rolled back; 5 failed, no previous revision; 6 rollback failed; 3 API error; 130 interrupted.\n' +
        `Environment: KUBE_CONFIG_PATH (kubeconfig), ${SOAK_ENV} (default --soak; set by deploy apply to the run's soak), DEPLOY_RUN_DIR (default --report-dir), DEPLOY_PROGRESS=json (set by deploy apply: progress and outcome as JSON lines on stderr, for its view).`,
    )
    .action(async (raw: Record<string, string | boolean | undefined>) => {
      // the one parse of both (config/duration.ts); every refusal said at once (exit 2)
      const issues: InputIssue[] = [];
      const read = (flag: string, text: string): Duration | undefined => {
        const r = readDuration(text, DURATION_RULES.rolloutStep);
        if (!r.ok) issues.push({ where: flag, message: `${r.problem}: ${text}` });
        return r.ok ? r.value : undefined;
      };
      const timeout = read('--timeout', String(raw.timeout));
      const rollbackTimeout = raw.rollbackTimeout === undefined ? timeout : read('--rollback-timeout', String(raw.rollbackTimeout));
      // the graph's step passes no --soak: deploy apply sets the run's in tofu's environment
      const soakFrom = raw.soak !== undefined ? '--soak' : SOAK_ENV;
      const soakText = raw.soak !== undefined ? String(raw.soak) : ctx.env[SOAK_ENV] || DURATION_RULES.soak.defaultText;
      const soakRead = readDuration(soakText, DURATION_RULES.soak);
      if (!soakRead.ok) issues.push({ where: soakFrom, message: `${soakRead.problem}: ${soakText}` });
      const soak = soakRead.ok ? soakRead.value : undefined;
      if (timeout === undefined || rollbackTimeout === undefined || soak === undefined) throw new ConfigError('Bad rollout options.', issues);
      const reportDir = typeof raw.reportDir === 'string' && raw.reportDir ? raw.reportDir : ctx.env.DEPLOY_RUN_DIR;
      const flags: RolloutFlags = {
        namespace: String(raw.namespace),
        node: String(raw.node),
        timeout,
        rollbackTimeout,
        soak,
        // the run directory of `deploy apply` comes through the environment of the graph's step
        ...(reportDir ? { reportDir } : {}),
        json: raw.json === true,
      };
      await runRolloutVerb(flags, ctx);
    });
}

async function runRolloutVerb(flags: RolloutFlags, ctx: CliContext): Promise<void> {
  const [{ runRollout }, { openRolloutApi }, { openKubeAccess }, { createProgress, createStepProgress, stepOutcomeLine, PROGRESS_ENV, PROGRESS_JSON }, report, { formatRolloutLine, formatRolloutEvidence }, { recordLastRollout }] = await Promise.all([
    import('../rollout/run-rollout.js'),
    import('../kube/rollout-api.js'),
    import('../kube/kubeconfig.js'),
    import('../rollout/progress.js'),
    import('../rollout/report.js'),
    import('../rollout/report-format.js'),
    import('../rollout/last-rollout.js'),
  ]);
  // the kubeconfig resolved once, at this process's boundary (KUBE_CONFIG_PATH: absolute from deploy apply)
  const api = await openRolloutApi(openKubeAccess({ cwd: ctx.cwd, env: ctx.env }));
  // in a run directory the step says it is running until its report is written (report.ts)
  const done = flags.reportDir ? await report.markStepRunning(flags.reportDir, flags.namespace, flags.node) : async () => {};
  // under `deploy apply` (its environment says so) the apply's view shows the progress and
  // the summary: the step writes machine lines instead of lines for people
  const forApply = ctx.env[PROGRESS_ENV] === PROGRESS_JSON && !flags.json;
  try {
    const result = await runRollout(
      { namespace: flags.namespace, node: flags.node, timeout: flags.timeout, rollbackTimeout: flags.rollbackTimeout, soak: flags.soak },
      { api, signal: ctx.signal, progress: forApply ? createStepProgress(ctx.stderr, flags.node) : createProgress(ctx.stderr, flags.node), logger: ctx.logger() },
    );
    if (flags.reportDir) await report.writeRolloutReport(flags.reportDir, result);
    // for `deploy status`, from any machine: the outcome on the Deployment (last-rollout.ts);
    // not with the run's signal, which an interrupt has already aborted
    await recordLastRollout(api, result).catch((err: unknown) =>
      ctx.logger().warn({ kind: 'rollout-report-unrecorded', node: flags.node, namespace: flags.namespace, err: String((err as Error)?.message ?? err) }, 'the rollout outcome could not be written on the Deployment; deploy status will not show it'),
    );
    if (flags.json) ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (forApply) ctx.stderr.write(stepOutcomeLine(result));
    else {
      const lines = [formatRolloutLine(result), ...(result.outcome === 'ready' ? [] : formatRolloutEvidence(result))];
      ctx.stdout.write(`${lines.join('\n')}\n`);
    }
    ctx.exitCode = report.outcomeExitCode(result.outcome);
  } finally {
    await done();
  }
}

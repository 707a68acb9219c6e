/**
 * argv -> command -> exit code. The only module that exits the process.
 * Verb modules register their commands and import their heavy dependencies (CDKTF, the
 * Kubernetes client) only inside their actions, so `deploy --help` stays fast.
 */
import { Command, CommanderError } from 'commander';
import { DeployError, ExitCode } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import type { CliContext } from './context.js';
import { registerVerbs } from './verbs.js';
import { EXIT_CODES_HELP } from './exit-codes-help.js';



export function buildProgram(ctx: CliContext): Command {
  const program = new Command('deploy')
    .description(
      'Run each node of a group (a machine image whose PID 1 is systemd) as the one pod of a ' +
        'Kubernetes Deployment, through one OpenTofu graph per target.',
    )
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    })
    .exitOverride()
    .addHelpText('after', EXIT_CODES_HELP);
  registerVerbs(program, ctx);
  for (const cmd of program.commands) cmd.exitOverride().configureOutput(program.configureOutput());
  return program;
}

/** Runs one command line and returns the exit code; never exits. */
export async function run(argv: readonly string[], partial: Partial<CliContext> = {}): Promise<number> {
  let logger: Logger | undefined;
  const controller = new AbortController();
  const env = partial.env ?? process.env;
  const ctx: CliContext = {
    stdout: partial.stdout ?? process.stdout,
    stderr: partial.stderr ?? process.stderr,
    env,
    cwd: partial.cwd ?? process.cwd(),
    logger: partial.logger ?? (() => (logger ??= createLogger({ env }))),
    signal: partial.signal ?? controller.signal,
    exitCode: ExitCode.ok,
  };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'node' });
    return ctx.exitCode;
  } catch (err) {
    return reportError(err, ctx);
  }
}

function reportError(err: unknown, ctx: CliContext): number {
  if (err instanceof CommanderError) {
    // commander already printed the message (or the help/version text)
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
      return ExitCode.ok;
    }
    return ExitCode.usage;
  }
  if (err instanceof DeployError) {
    ctx.stderr.write(`deploy: ${err.message}\n`);
    if (err.hint) ctx.stderr.write(`  what to do: ${err.hint}\n`);
    if (ctx.env.DEPLOY_DEBUG && err.cause) ctx.stderr.write(`  cause: ${String((err.cause as Error)?.stack ?? err.cause)}\n`);
    return err.exitCode;
  }
  const e = err as Error;
  ctx.stderr.write(`deploy: unexpected error: ${e?.stack ?? String(err)}\n`);
  return ExitCode.internal;
}

/** The process entry (bin/deploy.js). */
export async function runMain(argv: readonly string[]): Promise<never> {
  const controller = new AbortController();
  let interrupts = 0;
  // tofu runs in its own process group and gets exactly ONE interrupt from us (a second one
  // makes it abandon the state). A second Ctrl-C only says what is going on; a third leaves
  // without waiting, and says what that costs.
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts += 1;
    if (interrupts === 1) {
      process.stderr.write(`\ndeploy: ${sig} received: stopping cleanly (work in flight finishes, state is saved, locks are released).\n`);
      controller.abort(new Error(sig));
    } else if (interrupts === 2) {
      process.stderr.write('deploy: still stopping cleanly; press Ctrl-C once more to leave without waiting (the state lock may then stay held: see `deploy state unlock`).\n');
    } else {
      process.stderr.write('deploy: leaving without waiting; tofu may still be running and the state lock may stay held (see `deploy state list` and `deploy state unlock`).\n');
      process.exit(ExitCode.interrupted);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A hangup (the terminal closed, a CD runner killing the step's shell) stops cleanly too:
  // Node's default for SIGHUP is to die at once, which left the run's state lock held.
  process.on('SIGHUP', onSignal);
  // With the terminal gone, a write to stdout/stderr fails (EPIPE); that must not end the run
  // before it has released its lock.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  const code = await run(argv, { signal: controller.signal });
  // let stdout drain before exiting
  await new Promise<void>((resolve) => (process.stdout.writableLength === 0 ? resolve() : process.stdout.once('drain', () => resolve())));
  process.exit(code);
}

/**
 * argv -> command -> exit code. The only module that exits the process.
 * Verb modules register their commands and import their heavy dependencies (CDKTF, the
 * Kubernetes client) only inside their actions, so `deploy --help` stays fast.
 */
import { Command, CommanderError } from 'commander';
import type { Writable } from 'node:stream';
import { DeployError, ExitCode, InterruptedError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import type { CliContext } from './context.js';
import { registerVerbs } from './verbs.js';
import { EXIT_CODES_HELP } from './help/exit-codes-help.js';
import { Shutdown } from './shutdown.js';

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

/**
 * Runs one command line and returns the exit code; never exits. `shutdown` (runMain's) gives
 * the run its signal and, after a signal, the exit code (shutdown.ts); without one the run
 * has its own, which only `partial.signal` aborts.
 */
export async function run(argv: readonly string[], partial: Partial<CliContext> & { readonly shutdown?: Shutdown } = {}): Promise<number> {
  let logger: Logger | undefined;
  const shutdown = partial.shutdown ?? new Shutdown({ write: () => {}, exit: () => {} });
  const env = partial.env ?? process.env;
  const ctx: CliContext = {
    stdout: partial.stdout ?? process.stdout,
    stderr: partial.stderr ?? process.stderr,
    env,
    cwd: partial.cwd ?? process.cwd(),
    logger: partial.logger ?? (() => (logger ??= createLogger({ env }))),
    signal: partial.signal ?? shutdown.signal,
    exitCode: ExitCode.ok,
    held: partial.held ?? shutdown.held,
  };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'node' });
    return shutdown.exitCode(ctx.exitCode, ctx.exitCode === ExitCode.interrupted);
  } catch (err) {
    const code = reportError(err instanceof CommanderError ? err : shutdown.explain(err), ctx);
    // after a signal, a failure is the interrupt's doing (a request it cut): the run was interrupted
    return shutdown.exitCode(code, err instanceof InterruptedError || !(err instanceof CommanderError));
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
  const shutdown = new Shutdown({
    write: (text) => process.stderr.write(text),
    exit: (code) => process.exit(code),
    who: async () => (await import('../state/run-lock.js')).runIdentity(process.env),
  });
  shutdown.install();
  // With the terminal gone, or stdout piped into `head`, a write fails (EPIPE): that must not
  // end the run before it has released its lock, nor print a stack.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  const code = await run(argv, { shutdown });
  await flushed(process.stdout);
  process.exit(code);
}

/**
 * Resolves once `stream` has written what it holds, or can write no more (EPIPE: the reader
 * closed the pipe, as `deploy --help | head -1` does). Waiting for 'drain' alone never ended
 * then, and Node left with exit 13 and "Warning: Detected unsettled top-level await".
 */
function flushed(stream: Writable): Promise<void> {
  return new Promise<void>((resolve) => {
    if (stream.writableLength === 0 || stream.destroyed || stream.errored) return resolve();
    const done = () => resolve();
    stream.once('drain', done);
    stream.once('error', done);
    stream.once('close', done);
  });
}

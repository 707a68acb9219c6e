import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { addInputOptions, type InputFlags } from './inputs.js';

export function registerDestroy(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('destroy')
    .description(
      "remove each target's namespace with everything in it (Deployments, claims with /var/lib); the images stay in the registry",
    );
  addInputOptions(cmd).action(async (flags: InputFlags) => {
    const { runVerb } = await import('../workflow/run-verb.js');
    const { reportVerb } = await import('./report/verb-report.js');
    const result = await runVerb('destroy', flags, ctx);
    reportVerb(ctx, result, flags.json);
    ctx.exitCode = result.exitCode;
  });
}

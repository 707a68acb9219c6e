import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { addAllowVolumeReplacementOption } from './allow-volume-replacement.js';
import { addInputOptions, type InputFlags } from './inputs.js';

export function registerApply(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('apply')
    .description(
      "push the node images, undo the hand edits the plan names (fields another writer set with kubectl), apply each target's graph, then wait for every replaced pod: a pod that does not become ready is rolled back to the previous image and the command fails",
    );
  addAllowVolumeReplacementOption(addInputOptions(cmd)).action(async (flags: InputFlags) => {
    const { runVerb } = await import('../workflow/run-verb.js');
    const { reportVerb } = await import('./report/verb-report.js');
    const result = await runVerb('apply', flags, ctx);
    reportVerb(ctx, result, flags.json);
    ctx.exitCode = result.exitCode;
  });
}

import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { addAllowVolumeReplacementOption } from './allow-volume-replacement.js';
import { addInputOptions, type InputFlags } from './inputs.js';

export function registerPlan(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('plan')
    .description(
      "show what apply would change, per node: pushes, Deployment changes, pod replacements, every hand edit (a field another writer such as kubectl set or removed, with that writer, and whether apply removes it, sets it back or keeps it), what the k8s method cannot honour, and the nodes another target of the group already runs (a second copy). A target unchanged since its last verified plan or apply on this machine is answered without a tofu refresh, and one where only some nodes changed is planned for those nodes alone; on any doubt the full plan runs, saying why (DEPLOY_FAST_PLAN=off: always)",
    );
  addAllowVolumeReplacementOption(addInputOptions(cmd)).action(async (flags: InputFlags) => {
    const { runVerb } = await import('../workflow/run-verb.js');
    const { reportVerb } = await import('./report/verb-report.js');
    const result = await runVerb('plan', flags, ctx);
    reportVerb(ctx, result, flags.json);
    ctx.exitCode = result.exitCode;
  });
}

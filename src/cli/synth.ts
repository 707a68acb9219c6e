import { Command } from 'commander';
import type { CliContext } from './context.js';
import { graphsDir, loadTargets } from '../config/load-targets.js';
import { addInputOptions, type InputFlags } from './inputs.js';

export function registerSynth(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('synth')
    .description('write the OpenTofu graph (cdk.tf.json) of each target and print its directory; touches nothing else');
  addInputOptions(cmd).action(async (flags: InputFlags) => {
    const { targets } = await loadTargets(flags, ctx);
    const { writeGraph } = await import('../graph/synth.js');
    const out = graphsDir(flags, ctx);
    const dirs: { target: string; stateKey: string; dir: string }[] = [];
    for (const t of targets) dirs.push({ target: t.target, stateKey: t.stateKey, dir: await writeGraph(t, out, { cached: false }) });
    if (flags.json) ctx.stdout.write(JSON.stringify({ graphs: dirs }, null, 2) + '\n');
    else for (const d of dirs) ctx.stdout.write(`${d.dir}\n`);
  });
}

import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { registerRollout } from './rollout.js';
import { registerState } from './state.js';
import { registerSynth } from './synth.js';

/**
 * Where every verb is registered. A new verb: one file in src/cli/ exporting
 * `register<Verb>(program, ctx)`, one line here.
 */
export function registerVerbs(program: Command, ctx: CliContext): void {
  registerSynth(program, ctx);
  registerState(program, ctx);
  registerRollout(program, ctx);
}

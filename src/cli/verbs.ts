import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { registerDoctor } from './doctor.js';
import { registerRollout } from './rollout.js';
import { registerState } from './state.js';
import { registerApply } from './apply.js';
import { registerDestroy } from './destroy.js';
import { registerPlan } from './plan.js';
import { registerSynth } from './synth.js';
import { registerStatus } from './status.js';
import { registerHistory } from './history.js';
import { registerRbac } from './rbac.js';

/**
 * Where every verb is registered. A new verb: one file in src/cli/ exporting
 * `register<Verb>(program, ctx)`, one line here.
 */
export function registerVerbs(program: Command, ctx: CliContext): void {
  registerSynth(program, ctx);
  registerPlan(program, ctx);
  registerApply(program, ctx);
  registerDestroy(program, ctx);
  registerStatus(program, ctx);
  registerHistory(program, ctx);
  registerRbac(program, ctx);
  registerState(program, ctx);
  registerRollout(program, ctx);
  registerDoctor(program, ctx);
}

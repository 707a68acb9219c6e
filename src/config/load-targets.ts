/**
 * The inputs of a run (plan file, chosen targets, coordinate flags) -> the models of the chosen
 * targets: reads the plan and the coordinates and reports the problems of both at once
 * (ConfigError, exit 2). Used by synth, plan, apply and destroy.
 */
import { defaultGraphsDir } from '../paths.js';
import { requireAbsoluteFile } from './file-coordinate.js';
import type { CoordinateFlags } from './coordinate-table.js';
import type { Coordinates } from './coordinates.js';
import type { TargetModel } from './target-model.js';

/** What chooses the targets of a run: the plan file, --target and the coordinate flags. */
export interface TargetInputs extends CoordinateFlags {
  plan: string;
  /** Every --target given, in order (the flag may repeat); undefined when none. */
  target?: string[];
  /** Where graph directories are written (default: $DEPLOY_STATE_DIR/graphs). */
  out?: string;
}

/** Where the run stands: relative paths resolve against `cwd`; coordinates come from `env`. */
export interface RunPlace {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Plan file + coordinates -> the models of the chosen targets, every target name of the group
 * (`groupTargets`) and the coordinates (for what stays out of the graph, like the kubeconfig
 * path); throws ConfigError with every problem.
 */
export async function loadTargets(inputs: TargetInputs, place: RunPlace): Promise<{ targets: TargetModel[]; groupTargets: string[]; coordinates: Coordinates }> {
  const { readGroupPlan, loadCoordinates, buildTargets, targetsOf } = await import('./load.js');
  const file = requireAbsoluteFile(inputs.plan, place, '--plan');
  // read both, then report the problems of both at once
  const [plan, coords] = await Promise.allSettled([readGroupPlan(file), Promise.resolve().then(() => loadCoordinates(inputs, place.env, place.cwd))]);
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
  return { targets: buildTargets(plan.value, coords.value, file, inputs.target), groupTargets: targetsOf(plan.value), coordinates: coords.value };
}

/** --out, else the state directory's graphs/. */
export function graphsDir(inputs: Pick<TargetInputs, 'out'>, place: RunPlace): string {
  return inputs.out ? requireAbsoluteFile(inputs.out, place, '--out') : defaultGraphsDir(place.env);
}

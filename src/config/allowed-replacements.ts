/**
 * The nodes named by `--allow-volume-replacement` (plan, apply): the override that lets a plan
 * delete or replace the /var/lib claim of a node that stays in the target
 * (src/workflow/guard/claim-guard.ts). Each name must be a node of a chosen target, so a typo never
 * passes unseen. The flag itself is declared in src/cli/allow-volume-replacement.ts.
 */
import { ConfigError } from '../errors.js';
import type { TargetModel } from './target-model.js';

/** The named nodes, checked against the nodes of the chosen targets (ConfigError naming each unknown one). */
export function allowedReplacements(named: readonly string[] | undefined, targets: readonly TargetModel[]): ReadonlySet<string> {
  const nodes = new Set(targets.flatMap((t) => t.nodes.map((n) => n.name)));
  const unknown = [...new Set(named ?? [])].filter((n) => !nodes.has(n));
  if (unknown.length > 0) {
    const chosen = targets.map((t) => t.target).join(', ');
    throw new ConfigError(
      `--allow-volume-replacement names ${unknown.length === 1 ? 'a node' : 'nodes'} that the chosen targets do not have`,
      unknown.map((n) => ({ where: '--allow-volume-replacement', message: `"${n}" is not a node of ${targets.length === 1 ? 'target' : 'targets'} ${chosen} (its nodes: ${[...nodes].sort().join(', ') || 'none'})` })),
      { hint: 'name a node of the group plan that the chosen target runs; nothing was changed' },
    );
  }
  return new Set(named ?? []);
}

/**
 * `--allow-volume-replacement <node>` (plan, apply): the override that lets a plan delete or
 * replace the /var/lib claim of a node that stays in the target (src/workflow/claim-guard.ts).
 * Repeatable; each name must be a node of a chosen target, so a typo never passes unseen.
 */
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import type { TargetModel } from '../config/target-model.js';

export function addAllowVolumeReplacementOption(cmd: Command): Command {
  return cmd.option(
    '--allow-volume-replacement <node>',
    "let this apply delete or replace the /var/lib claim of <node>, losing the data on it (repeat for each node); without it, apply refuses (exit 2) a plan that takes the claim of a node that stays, e.g. after a change of K8S_STORAGE_CLASS",
    (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
  );
}

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

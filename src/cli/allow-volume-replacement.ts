/**
 * `--allow-volume-replacement <node>` (plan, apply): the override that lets a plan delete or
 * replace the /var/lib claim of a node that stays in the target (src/workflow/guard/claim-guard.ts).
 * Repeatable; the names are checked against the chosen targets in
 * src/config/allowed-replacements.ts.
 */
import type { Command } from 'commander';

export function addAllowVolumeReplacementOption(cmd: Command): Command {
  return cmd.option(
    '--allow-volume-replacement <node>',
    "let this apply delete or replace the /var/lib claim of <node>, losing the data on it (repeat for each node); without it, apply refuses (exit 2) a plan that takes the claim of a node that stays, e.g. after a change of K8S_STORAGE_CLASS",
    (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
  );
}

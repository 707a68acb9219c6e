/**
 * Which targets a run works on. Without --target only `all`: every node once, in the
 * namespace K8S_NAMESPACE. Each per-app target runs its nodes again, in `<ns>-<app>`, each
 * copy with its own /var/lib and machine ID (FR-007 makes per-app namespaces so that targets
 * *can* coexist, not so that one command makes every copy). So more than one target is only
 * ever asked for: `--target <app>`, `--target '*'`, or the flag repeated.
 */
import type { InputIssue } from '../errors.js';

export const ALL_TARGET = 'all';
/** `--target '*'`: every target of the group. */
export const EVERY_TARGET = '*';

/**
 * `asked` (the --target values, undefined or empty when none) -> the targets, in the
 * group's order (`all`, then the apps sorted), each once; or an issue per unknown name.
 * `known` is that order, as load.ts targetsOf gives it.
 */
export function chooseTargets(known: readonly string[], asked: readonly string[] | undefined, group: string): { chosen: string[]; issues: InputIssue[] } {
  const wanted = asked === undefined || asked.length === 0 ? [ALL_TARGET] : asked;
  const issues: InputIssue[] = wanted
    .filter((t) => t !== EVERY_TARGET && !known.includes(t))
    .map((t) => ({ where: '--target', message: `"${t}" is not a target of group "${group}"; its targets are: ${known.join(', ')} (or '${EVERY_TARGET}' for every one)` }));
  const chosen = wanted.includes(EVERY_TARGET) ? [...known] : known.filter((t) => wanted.includes(t));
  return { chosen, issues };
}

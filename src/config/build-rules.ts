/**
 * The rule for nodes that build their image (`image.build`, FR-002): nodes that name one
 * archive write one file, so when one of them builds it, all of them must build it the same
 * way for the same tag. Otherwise two pushes would write the file at once (different tags
 * push in parallel) or one node would push what another node's command wrote.
 */
import { isAbsolute, resolve } from 'node:path';
import type { InputIssue } from '../errors.js';
import type { GroupPlan } from './plan-schema.js';

/** The archive path as the model has it: absolute, or relative to the plan file's directory. */
export const archivePath = (archive: string, planDir: string): string => (isAbsolute(archive) ? archive : resolve(planDir, archive));

export function sharedArchiveProblems(plan: GroupPlan, planDir: string, at: (path: readonly PropertyKey[]) => string): InputIssue[] {
  const byArchive = new Map<string, string[]>();
  for (const name of Object.keys(plan.nodes).sort()) {
    const archive = archivePath(plan.nodes[name]!.image.archive, planDir);
    byArchive.set(archive, [...(byArchive.get(archive) ?? []), name]);
  }
  const issues: InputIssue[] = [];
  for (const [archive, nodes] of byArchive) {
    if (nodes.length < 2 || nodes.every((n) => plan.nodes[n]!.image.build === undefined)) continue;
    const first = nodes[0]!;
    const same = (n: string) => {
      const a = plan.nodes[first]!.image;
      const b = plan.nodes[n]!.image;
      return a.tag === b.tag && JSON.stringify(a.build ?? null) === JSON.stringify(b.build ?? null);
    };
    for (const n of nodes.slice(1).filter((x) => !same(x))) {
      issues.push({
        where: at(['nodes', n, 'image']),
        message: `node "${n}" names the archive ${archive} of node "${first}", and one of them builds it (image.build): nodes that share an archive must have the same image.build and image.tag; give node "${n}" an archive of its own`,
      });
    }
  }
  return issues;
}

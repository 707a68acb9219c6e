/**
 * The archives an apply pushes, checked before tofu applies anything (issue 30, preflight): a
 * node whose push the plan makes, and whose image has no `build` (which writes the archive in
 * the push step itself), needs its archive readable now. Found missing here it is one error,
 * exit 2, naming every such node and file, with nothing changed; found inside `tofu apply` it
 * failed after seconds of work, in the words of the push step's shell script. The archive of a
 * node whose tag is already pushed is not read at all, so it may be gone (an operator's clean-up).
 * A node whose image has a `build` needs its command: found on PATH (or, with a `/`, relative to
 * the plan's directory) and executable, else the same error names it.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { TargetModel } from '../../config/target-model.js';
import { ConfigError } from '../../errors.js';
import { pushingNodes, type TargetSummary } from '../summary/plan-summary.js';

const can = (file: string, mode: number) =>
  access(file, mode).then(
    () => true,
    () => false,
  );

/** Where a build command runs from: a path with `/` (relative to the plan's directory), else the first on PATH. */
async function findCommand(command: string, dir: string, path: string): Promise<string | undefined> {
  if (command.includes('/')) {
    const file = isAbsolute(command) ? command : resolve(dir, command);
    return (await can(file, constants.X_OK)) ? file : undefined;
  }
  for (const d of path.split(delimiter).filter((x) => x !== '')) if (await can(join(d, command), constants.X_OK)) return join(d, command);
  return undefined;
}

/**
 * Throws a ConfigError naming each node the plan pushes whose archive cannot be read, or whose
 * image.build command cannot be found. `path`: the PATH the push steps run with.
 */
export async function requirePushArchives(model: TargetModel, summary: Pick<TargetSummary, 'nodes'>, path = process.env.PATH ?? ''): Promise<void> {
  const pushed = pushingNodes(summary);
  const issues: { where: string; message: string }[] = [];
  for (const n of model.nodes) {
    if (!pushed.has(n.name)) continue;
    if (n.build !== undefined) {
      const command = n.build.argv[0]!;
      if ((await findCommand(command, n.build.dir, path)) === undefined) {
        issues.push({ where: `node ${n.name}: image.build[0]`, message: `${command} is not ${command.includes('/') ? `an executable file (from ${n.build.dir})` : 'an executable on PATH'}, and this apply builds the image with it (${n.tagRef} is not in the registry as pushed)` });
      }
      continue;
    }
    if (!(await can(n.archive, constants.R_OK))) issues.push({ where: `node ${n.name}: image.archive`, message: `${n.archive} cannot be read, and this apply pushes it (${n.tagRef} is not in the registry as pushed)` });
  }
  if (issues.length > 0) {
    const what = issues.every((i) => i.where.endsWith('image.archive')) ? (issues.length === 1 ? 'an image archive is' : 'image archives are') : issues.length === 1 ? 'what builds or holds an image is' : 'what builds or holds the images is';
    throw new ConfigError(`deploy apply of target ${model.target} stopped before changing anything: ${what} missing`, issues, {
      hint: 'build the image archive (or point image.archive at it), install the image.build command or fix its path, then run deploy apply again',
    });
  }
}

/**
 * The archives an apply pushes, checked before tofu applies anything (issue 30, preflight): a
 * node whose push the plan makes, and whose image has no `build` (which writes the archive in
 * the push step itself), needs its archive readable now. Found missing here it is one error,
 * exit 2, naming every such node and file, with nothing changed; found inside `tofu apply` it
 * failed after seconds of work, in the words of the push step's shell script. The archive of a
 * node whose tag is already pushed is not read at all, so it may be gone (an operator's clean-up).
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { TargetModel } from '../config/target-model.js';
import { ConfigError } from '../errors.js';
import type { TargetSummary } from './plan-summary.js';

/** Throws a ConfigError naming each node the plan pushes whose archive cannot be read. */
export async function requirePushArchives(model: TargetModel, summary: Pick<TargetSummary, 'nodes'>): Promise<void> {
  const pushed = new Set(summary.nodes.filter((n) => n.push === 'create' || n.push === 'replace').map((n) => n.node));
  const issues: { where: string; message: string }[] = [];
  for (const n of model.nodes) {
    if (!pushed.has(n.name) || n.build !== undefined) continue;
    const readable = await access(n.archive, constants.R_OK).then(
      () => true,
      () => false,
    );
    if (!readable) issues.push({ where: `node ${n.name}: image.archive`, message: `${n.archive} cannot be read, and this apply pushes it (${n.tagRef} is not in the registry as pushed)` });
  }
  if (issues.length > 0) {
    throw new ConfigError(`deploy apply of target ${model.target} stopped before changing anything: ${issues.length === 1 ? 'an image archive is' : 'image archives are'} missing`, issues, {
      hint: 'build the image archive (or point image.archive at it), or give the node an image.build that writes it, then run deploy apply again',
    });
  }
}

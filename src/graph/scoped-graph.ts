/**
 * The graph a scoped plan gives tofu: the blocks its `-target` and `-replace` addresses name and
 * every block those name in turn, nothing else of the resources and data sources; every other
 * part of the graph (terraform, provider, output, ...) whole, with the blocks it names.
 *
 * Why: `tofu plan -target` plans the targets and what they depend on, and nothing else, but it
 * reads, validates and builds its graph of the whole configuration first, then prunes it. At
 * 200 nodes that was 5.1 of a 1-node apply's 15.3 s (bench/README.md, 2026-12-07): the work grew
 * with the group for a plan of one node. Given only the blocks it keeps, tofu makes the same
 * plan (the same changes, the same prior state: measured on the bench's 200-node group, and
 * tested on generated groups, test/e2e/deploy-scoped-graph.test.ts) in 1.2 s.
 *
 * Why it is the same plan: the set kept is closed under references (graph-references.ts finds a
 * superset of tofu's), so every block tofu's -target keeps is here, with the same text. A block
 * of the state that is not here is to tofu what a block outside the targets is: not planned, its
 * state left as it is. The graph of the target stays one (`cdk.tf.json`, whole, in its
 * directory: the no-op record, `deploy synth` and a full plan read that one); this is a copy of
 * part of it, written again by each scoped plan in a directory inside the graph's, sharing its
 * providers and lock file. tofu applies the saved plan in the directory it made it in (tofu.ts applyPlan).
 */
import { copyFile, mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GraphDocument } from '../contract/graph/graph-document.js';
import { GRAPH_FILE } from '../contract/graph/graph-ids.js';
import { graphBlocks, referencesIn } from '../contract/graph/graph-references.js';
import { DeployError, ExitCode } from '../errors.js';
import { LOCK_FILE } from '../tools/provider-lock.js';

/** `type.name` or `data.type.name` of an address (an instance key such as `[0]` dropped). */
function blockAddress(address: string): string {
  return address.replace(/\[[^\]]*\]$/, '');
}

/**
 * The part of `doc` a plan of `roots` (its -target and -replace addresses) reads. A root that is
 * no block of the graph (a resource only in the state: a node removed) needs none: tofu plans
 * its deletion from the state alone, as it does with the whole graph.
 */
export function scopedGraph(doc: GraphDocument, roots: readonly string[]): GraphDocument {
  const blocks = graphBlocks(doc);
  const { resource: _r, data: _d, ...rest } = doc;
  const kept = new Set<string>();
  const todo = [...roots.map(blockAddress).filter((a) => blocks.has(a)), ...referencesIn(rest, blocks)];
  while (todo.length > 0) {
    const address = todo.pop()!;
    if (kept.has(address)) continue;
    kept.add(address);
    for (const r of referencesIn(blocks.get(address), blocks)) if (!kept.has(r)) todo.push(r);
  }
  const part = (section: 'resource' | 'data', prefix: string) => {
    const out: Record<string, Record<string, Record<string, unknown>>> = {};
    for (const [type, byName] of Object.entries(doc[section] ?? {})) {
      const names = Object.keys(byName).filter((name) => kept.has(`${prefix}${type}.${name}`));
      if (names.length > 0) out[type] = Object.fromEntries(names.map((n) => [n, byName[n]!]));
    }
    return out;
  };
  const resource = part('resource', '');
  const data = part('data', 'data.');
  return { ...rest, ...(Object.keys(resource).length > 0 ? { resource } : {}), ...(Object.keys(data).length > 0 ? { data } : {}) };
}

/** The directory of a graph directory's scoped plans: inside it, where tofu in the graph directory reads no file. */
export function scopedGraphDir(graphDir: string): string {
  return join(graphDir, 'scoped');
}

/**
 * Writes `doc` as the graph of `scopedGraphDir(graphDir)`, where tofu runs as in the graph
 * directory: its providers and backend settings (`.terraform`, linked) and its lock file
 * (copied). Returns that directory. Nothing else in it is touched: an `errored.tfstate` tofu
 * left there (tofu-errored-state.ts names its path) stays until the operator pushed it.
 */
export async function writeScopedGraph(graphDir: string, doc: GraphDocument): Promise<string> {
  const dir = scopedGraphDir(graphDir);
  try {
    await mkdir(dir, { recursive: true });
    const link = join(dir, '.terraform');
    if ((await readlink(link).catch(() => undefined)) !== '../.terraform') {
      await rm(link, { recursive: true, force: true });
      await symlink('../.terraform', link, 'dir');
    }
    // (a graph initialised without one has none to copy: tofu then runs as in the graph directory)
    await copyFile(join(graphDir, LOCK_FILE), join(dir, LOCK_FILE)).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
    const file = join(dir, GRAPH_FILE);
    await writeFile(`${file}.tmp`, JSON.stringify(doc));
    await rename(`${file}.tmp`, file);
  } catch (err) {
    throw new DeployError(`the scoped graph could not be written in ${dir}: ${(err as Error).message}`, ExitCode.tool, {
      hint: `it is inside the target's graph directory ${graphDir} (under DEPLOY_STATE_DIR): check that it is writable and has room, then run again`,
      cause: err,
    });
  }
  return dir;
}

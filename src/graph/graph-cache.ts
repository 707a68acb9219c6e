/**
 * The graph cache. A target's graph is a pure function of its model and of the code that
 * renders it (render.ts: no file, environment or clock is read), so a graph written before is
 * the graph again when both are the same. Beside each written graph, `.synth-key.json` keeps
 * sha256 of the model, of that code, and of the graph's bytes as written; the next run with the
 * same key, whose graph file still has those bytes, takes the file instead of rendering. Measured
 * (bench/README.md, P10): the render was about 1 s of the 2-4 s of a 200-node group's verified
 * no-op plan, and loading CDKTF for it a little more.
 *
 * "The code" is every file of this tree's src/ and stacks/ (dist/ when deploy runs built, the
 * sources under vitest) and the versions of CDKTF, constructs and the provider bindings: a
 * rebuild or an upgrade that changes any of them renders again. A hand edit of cdk.tf.json
 * changes its bytes: rendered again. A key that does not match, a missing or unreadable key
 * file: rendered again. Nothing else is trusted.
 */
import { z } from 'zod';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TargetModel } from '../config/target-model.js';

/** A package.json, for its version. */
const packageVersionSchema = z.looseObject({ version: z.string().optional() });
/** The key file beside a graph (KeyFile). */
const keyFileSchema = z.object({ key: z.string(), graph: z.string() });
import { stableJson } from '../contract/stable-json.js';

/** The key file, beside cdk.tf.json (not a `*.tf.json`: tofu does not load it). */
export const GRAPH_KEY_FILE = '.synth-key.json';

/** The packages whose code renders the graph besides this tree's (stacks/ imports them). */
const RENDER_PACKAGES = ['cdktf', 'constructs', '@cdktf/provider-kubernetes', '@cdktf/provider-null', '@cdktf/provider-random', '@cdktf/provider-external'];

let identity: string | undefined;

/** sha256 of the code that renders a graph (computed once per process). */
export function rendererIdentity(): string {
  if (identity !== undefined) return identity;
  // this file is <tree>/src/graph/graph-cache.{ts,js}: <tree> is the repository or dist/
  const tree = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const h = createHash('sha256');
  for (const top of ['src', 'stacks']) {
    for (const file of filesUnder(join(tree, top))) h.update(`${file.slice(tree.length)}\0`).update(readFileSync(file)).update('\0');
  }
  const require = createRequire(import.meta.url);
  for (const pkg of RENDER_PACKAGES) {
    const version = packageVersionSchema.safeParse(JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8'))).data?.version;
    h.update(`${pkg}@${version ?? '?'}\n`);
  }
  identity = h.digest('hex');
  return identity;
}

/** Every file under `dir`, sorted (the same tree gives the same order). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(path));
    else if (e.isFile()) out.push(path);
  }
  return out;
}

/** The key of a model's graph: the model as stable JSON and the renderer's identity. */
export function graphKey(model: TargetModel): string {
  return sha256(`${rendererIdentity()}\n${stableJson(model)}`);
}

interface KeyFile {
  readonly key: string;
  /** sha256 of cdk.tf.json as written with this key */
  readonly graph: string;
}

/** Whether `graphText` (cdk.tf.json as read now) is the graph of `key`, by the key file in `dir`. */
export async function isGraphOf(dir: string, key: string, graphText: string): Promise<boolean> {
  const text = await readFile(join(dir, GRAPH_KEY_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  try {
    const kept = keyFileSchema.safeParse(JSON.parse(text));
    return kept.success && kept.data.key === key && kept.data.graph === sha256(graphText);
  } catch {
    return false;
  }
}

/** Records that `graphText` (as written in `dir`) is the graph of `key`. */
export async function keepGraphKey(dir: string, key: string, graphText: string): Promise<void> {
  const file = join(dir, GRAPH_KEY_FILE);
  const kept: KeyFile = { key, graph: sha256(graphText) };
  await writeFile(`${file}.${process.pid}.tmp`, `${JSON.stringify(kept)}\n`);
  await rename(`${file}.${process.pid}.tmp`, file);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

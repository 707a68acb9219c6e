/**
 * Target model -> graph directory (`<out>/<state key>/cdk.tf.json`), written with a stable
 * layout; the same model gives byte-identical output (render.ts). A graph written before for
 * the same model by the same code is taken as it is (graph-cache.ts): CDKTF is then not even
 * loaded. A run keeps the graph it wrote (writeTargetGraph: its text and its document, parsed
 * once): nothing reads the file back.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TargetModel } from '../config/target-model.js';
import { graphDocumentSchema, type GraphDocument } from '../contract/graph/graph-document.js';
import { GRAPH_FILE } from '../contract/graph/graph-ids.js';
import { parseJson } from '../contract/parse-json.js';
import { graphKey, isGraphOf, keepGraphKey } from './graph-cache.js';

/**
 * Writes the graph directory of a target and returns its path; leaves an unchanged file alone.
 * `cached: false` (`deploy synth`, into a directory of the operator's): always rendered, and no
 * key file written beside the graph.
 */
export async function writeGraph(model: TargetModel, outDir: string, opts: { readonly cached?: boolean } = {}): Promise<string> {
  return (await writeGraphText(model, outDir, opts)).dir;
}

/** A target's graph as a run keeps it once written: its directory, the file's text, and the document parsed once. */
export interface TargetGraph {
  readonly dir: string;
  /** cdk.tf.json's bytes as written (or as found, when the cache took them). */
  readonly text: string;
  readonly document: GraphDocument;
}

/** writeGraph of a run (cached), keeping what was written in memory. */
export async function writeTargetGraph(model: TargetModel, outDir: string): Promise<TargetGraph> {
  const { dir, text } = await writeGraphText(model, outDir, {});
  return { dir, text, document: parseJson(graphDocumentSchema, text, `the graph ${join(dir, GRAPH_FILE)}`) };
}

async function writeGraphText(model: TargetModel, outDir: string, opts: { readonly cached?: boolean }): Promise<{ dir: string; text: string }> {
  const cached = opts.cached ?? true;
  const dir = join(outDir, model.stateKey);
  await mkdir(dir, { recursive: true });
  const file = join(dir, GRAPH_FILE);
  const key = cached ? graphKey(model) : '';
  const old = await readFile(file, 'utf8').catch(() => undefined);
  if (cached && old !== undefined && (await isGraphOf(dir, key, old))) return { dir, text: old };
  const { renderGraph } = await import('./render.js');
  const text = renderGraph(model);
  if (old !== text) {
    await writeFile(`${file}.tmp`, text);
    await rename(`${file}.tmp`, file);
  }
  if (cached) await keepGraphKey(dir, key, text);
  return { dir, text };
}

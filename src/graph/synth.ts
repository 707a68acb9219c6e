/**
 * Target model -> graph directory (`<out>/<state key>/cdk.tf.json`). The stack is built
 * in memory and written with a stable layout; the same model gives byte-identical output.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { App } from 'cdktf';
import type { TargetModel } from '../config/target-model.js';
import { TargetStack } from '../../stacks/target-stack.js';

import { GRAPH_FILE } from '../contract/graph-ids.js';

/** The graph of one target as JSON text. */
export function renderGraph(model: TargetModel): string {
  return withoutStackTraces(() => {
    // skipValidation: validation only checks what the model already guarantees, and costs time
    const app = new App({ outdir: '/nonexistent', skipValidation: true, stackTraces: false });
    const stack = new TargetStack(app, model.stateKey, model);
    return JSON.stringify(stack.toTerraform(), null, 2) + '\n';
  });
}

/**
 * CDKTF captures a full stack trace for every token it creates (cdktf/lib/tokens/private/
 * intrinsic.js, whatever `stackTraces` says), only to decorate resolution errors. Formatting
 * those traces was about half of the time of a 200-node synth; while the stack is built, a
 * stack trace limit of 0 that ignores writes makes each capture empty and cheap.
 */
function withoutStackTraces<T>(fn: () => T): T {
  const saved = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  Object.defineProperty(Error, 'stackTraceLimit', { configurable: true, get: () => 0, set: () => {} });
  try {
    return fn();
  } finally {
    if (saved) Object.defineProperty(Error, 'stackTraceLimit', saved);
    else delete (Error as { stackTraceLimit?: number }).stackTraceLimit;
  }
}

/** Writes the graph directory of a target and returns its path; leaves an unchanged file alone. */
export async function writeGraph(model: TargetModel, outDir: string): Promise<string> {
  const dir = join(outDir, model.stateKey);
  await mkdir(dir, { recursive: true });
  const file = join(dir, GRAPH_FILE);
  const text = renderGraph(model);
  const old = await readFile(file, 'utf8').catch(() => undefined);
  if (old !== text) {
    await writeFile(`${file}.tmp`, text);
    await rename(`${file}.tmp`, file);
  }
  return dir;
}

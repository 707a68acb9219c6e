/**
 * Target model -> the graph's JSON text (cdk.tf.json), through CDKTF. A pure function of the
 * model and of this code: it reads no file, no environment and no clock, so the same model
 * gives byte-identical output (what the graph cache of synth.ts relies on).
 */
import { App } from 'cdktf';
import type { TargetModel } from '../config/target-model.js';
import { TargetStack } from '../../stacks/target-stack.js';

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

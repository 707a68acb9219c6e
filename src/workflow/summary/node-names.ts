/**
 * FR-009: a target's node names, read from its graph's output `node_names`
 * (stacks/target-stack.ts), not from the plan file: what the state holds after an apply, or
 * what the saved plan will make it hold.
 */
import { z } from 'zod';
import { NODE_NAMES_OUTPUT } from '../../contract/graph/graph-outputs.js';

const nodeNamesSchema = z.array(z.string());

/**
 * The node names among root outputs (`tofu output -json`, or a plan's planned outputs);
 * `undefined` when the output is missing or not a list of names (a state written before it).
 */
export function nodeNamesFrom(outputs: Readonly<Record<string, { readonly value?: unknown }>> | undefined): string[] | undefined {
  const parsed = nodeNamesSchema.safeParse(outputs?.[NODE_NAMES_OUTPUT]?.value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The OpenTofu state document (format version 4), as every module of deploy that reads a
 * state reads it: the embedded backend (src/state/state-document.ts: is an update allowed),
 * the nodes a state runs (src/workflow/status/nodes-in-state.ts), the state inside a saved plan
 * (src/tools/planfile/plan-file.ts) and the state the verified no-op check trusts or not
 * (src/workflow/drift/target-objects.ts).
 *
 * The fields deploy relies on are checked; every object keeps the fields it does not know
 * (the providers' attributes, `private`, `dependencies`, ...), so a value read here is the
 * document itself, not a copy of part of it.
 * https://opentofu.org/docs/language/state/ and internal/states/statefile/version4.go
 */
import { z } from 'zod';

/** The state format version deploy reads (internal/states/statefile: version 4). */
export const TOFU_STATE_VERSION = 4;

/** One instance of a resource: `index_key` for count/for_each, `status` "tainted" after a failed create. */
export const tofuInstanceSchema = z.looseObject({
  index_key: z.union([z.string(), z.number()]).optional(),
  status: z.string().optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});
export type TofuInstance = z.output<typeof tofuInstanceSchema>;

/** One resource block (a resource or a data source) and its instances. */
export const tofuResourceSchema = z.looseObject({
  /** The module's address (`module.x`); none in the root module. */
  module: z.string().optional(),
  mode: z.enum(['managed', 'data']),
  type: z.string(),
  name: z.string(),
  instances: z.array(tofuInstanceSchema),
});
export type TofuResource = z.output<typeof tofuResourceSchema>;

/** A root output as the state keeps it (`sensitive` and `type` beside the value). */
export const tofuOutputSchema = z.looseObject({ value: z.unknown() });

/**
 * A state document. `serial` and `lineage` are optional here: the state inside a saved plan of
 * a target that has none yet carries neither (the backend's own view, below, requires both).
 */
export const tofuStateSchema = z.looseObject({
  version: z.number().int(),
  serial: z.number().int().nonnegative().optional(),
  lineage: z.string().optional(),
  resources: z.array(tofuResourceSchema).optional(),
  outputs: z.record(z.string(), tofuOutputSchema).optional(),
});
export type TofuState = z.output<typeof tofuStateSchema>;

/**
 * The same document as the state backend judges an update by (src/state/store/update-rules.ts): its
 * version, serial and lineage, required, and whether it holds anything (the resources'
 * instances and the outputs are counted, never read: the backend stores the document byte for
 * byte, so it does not refuse one for a resource it would not read).
 */
export const tofuStateHeaderSchema = tofuStateSchema.extend({
  serial: z.number().int().nonnegative(),
  lineage: z.string().min(1),
  resources: z.array(z.looseObject({ instances: z.array(z.unknown()).optional() })).optional(),
  outputs: z.record(z.string(), z.unknown()).optional(),
});

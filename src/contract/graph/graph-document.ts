/**
 * The synthesized graph (cdk.tf.json) as the runtime reads it back: blocks of resources and
 * data sources by type and name. Only that shape is checked; each block's fields stay unknown
 * to whoever does not need them (the hand-edit check reads a Deployment's `manifest`, the no-op
 * check hashes the blocks whole), and the rest of the document (terraform, output, ...) is kept.
 */
import { z } from 'zod';

const blocksByTypeAndName = z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown())));

export const graphDocumentSchema = z.looseObject({
  resource: blocksByTypeAndName.optional(),
  data: blocksByTypeAndName.optional(),
});

export type GraphDocument = z.output<typeof graphDocumentSchema>;

import { describeIssues } from '../contract/parse-json.js';
import { tofuStateHeaderSchema } from '../contract/graph/tofu-state.js';

/**
 * The few fields of a state document the backend judges an update by (the backend's view of
 * the one model, src/contract/graph/tofu-state.ts). The rest of the document is stored byte for byte
 * and never interpreted.
 */
export interface StateHeader {
  readonly serial: number;
  readonly lineage: string;
  /** No resource instance and no output: nothing would be lost by replacing it. */
  readonly empty: boolean;
}

export type StateHeaderParse = { ok: true; header: StateHeader } | { ok: false; problem: string };

export function parseStateHeader(body: Buffer): StateHeaderParse {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, problem: 'the body is not JSON: expected an OpenTofu state document' };
  }
  const parsed = tofuStateHeaderSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      problem: `the body is not an OpenTofu state document: ${describeIssues(parsed.error)}`,
    };
  }
  const s = parsed.data;
  const instances = (s.resources ?? []).reduce((n, r) => n + (r.instances?.length ?? 0), 0);
  const outputs = Object.keys(s.outputs ?? {}).length;
  return { ok: true, header: { serial: s.serial, lineage: s.lineage, empty: instances === 0 && outputs === 0 } };
}

/**
 * A tag moved in the registry behind deploy's back (FR-003). The Deployment names the digest
 * recorded when deploy pushed the tag (stacks/node.ts: the `pushed-digest` record), and the
 * plan reads what the tag points at now (the `digest` data source). When the two differ, the
 * plan says so, naming the node and both digests, and nothing follows the tag: the pod keeps
 * the pushed image. To run the other image, the operator gives the node a new tag.
 *
 * Both values come from the state the saved plan was made from (src/tools/planfile/plan-file.ts):
 * no process, and no `tofu show -json` on a no-op plan. Pure.
 */
import { nodeResourceOf } from '../../contract/graph/graph-ids.js';
import type { TofuResource } from '../../contract/graph/tofu-state.js';

export interface MovedTag {
  /** The digest deploy pushed and the Deployment names. */
  readonly recorded: string;
  /** The digest the tag points at now. */
  readonly current: string;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The nodes whose tag points at another digest than the one recorded at their push. A node
 * whose push is planned (its digest is read after it) has no fresh read here: the caller
 * ignores it (plan-summary.ts).
 */
export function movedTags(resources: readonly TofuResource[]): ReadonlyMap<string, MovedTag> {
  const current = new Map<string, string>();
  for (const r of resources) {
    const part = nodeResourceOf(r.name);
    if (part?.construct !== 'image' || r.mode !== 'data' || r.type !== 'external' || part.part !== 'digest') continue;
    const d = digestOf(r.instances?.[0]?.attributes?.result);
    if (d !== undefined) current.set(part.node, d);
  }
  return movedFrom(recordedPushDigests(resources), current);
}

/** Each node's digest recorded at its push (the `pushed-digest` record of the state). */
export function recordedPushDigests(resources: readonly TofuResource[]): Map<string, string> {
  const recorded = new Map<string, string>();
  for (const r of resources) {
    const part = nodeResourceOf(r.name);
    if (part?.construct !== 'image' || r.mode !== 'managed' || r.type !== 'terraform_data' || part.part !== 'pushed-digest') continue;
    // a dynamic value in the state: {value, type}
    const d = digestOf((r.instances?.[0]?.attributes?.output as { value?: unknown } | undefined)?.value);
    if (d !== undefined) recorded.set(part.node, d);
  }
  return recorded;
}

/** The nodes whose tag points now (`current`) at another digest than the recorded one. */
export function movedFrom(recorded: ReadonlyMap<string, string>, current: ReadonlyMap<string, string>): Map<string, MovedTag> {
  const moved = new Map<string, MovedTag>();
  for (const [node, r] of recorded) {
    const c = current.get(node);
    if (c !== undefined && c !== r) moved.set(node, { recorded: r, current: c });
  }
  return moved;
}

function digestOf(v: unknown): string | undefined {
  const d = v !== null && typeof v === 'object' ? (v as { digest?: unknown }).digest : undefined;
  return typeof d === 'string' && DIGEST.test(d) ? d : undefined;
}

/** The plan's words for a moved tag. */
export function describeMovedTag(tagRef: string | undefined, m: MovedTag): string {
  return `${tagRef !== undefined ? `its tag ${tagRef}` : 'its tag'} was moved in the registry (not by deploy): it points at ${m.current}; the Deployment keeps ${m.recorded}, the digest deploy pushed, and nothing follows the tag (FR-003); to run the other image, give the node a new tag`;
}

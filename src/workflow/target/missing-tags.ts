/**
 * A tag the registry no longer has (wiped, garbage-collected, deleted by hand) while the state
 * says it was pushed (issue 18 item 9). The push step is replaced only when the tag changes
 * (FR-002), so the plan reads the digest of a tag that is gone, and `skopeo inspect` fails with
 * the registry's "manifest unknown". Instead of failing there, the plan is made again with the
 * push of each such node replaced (`tofu plan -replace=<its push>`): the apply pushes the
 * image again, then reads its digest. The operator is told, naming the node and the tag.
 *
 * Only a tag that is gone is pushed again: a registry that cannot be reached (or refuses the
 * credentials) still fails the plan, because a push would fail the same way (edge case 2).
 */
import { nodeResourceOf, resourceNameOf } from '../../contract/graph/graph-ids.js';
import { failedOnlyAtDigests } from './destroy-plan.js';
import type { TofuDiagnostic } from '../../tools/tofu/tofu.js';

/** What the registry (distribution's API error MANIFEST_UNKNOWN) says of a tag it does not have, as skopeo prints it. */
const TAG_GONE = /manifest unknown/i;

export interface GoneTag {
  readonly node: string;
  /** The address of the node's push step in the graph, for `-replace`. */
  readonly pushAddress: string;
}

/**
 * The nodes whose tag is gone, when every error of `err` is a digest read that says so; else
 * undefined (the failure is something else, and stands). `graph` is the synthesized
 * cdk.tf.json, where the push steps' addresses are read.
 */
export function goneTags(err: unknown, graph: { resource?: Record<string, Record<string, unknown>> }): GoneTag[] | undefined {
  const digests = failedOnlyAtDigests(err);
  if (digests === undefined) return undefined;
  const diagnostics = ((err as { diagnostics?: TofuDiagnostic[] }).diagnostics ?? []).filter((d) => d.severity === 'error');
  if (!diagnostics.every((d) => TAG_GONE.test(`${d.summary}\n${d.detail}`))) return undefined;
  const pushes = Object.keys(graph.resource?.null_resource ?? {});
  const gone: GoneTag[] = [];
  for (const address of digests) {
    const node = nodeResourceOf(resourceNameOf(address))!.node;
    const push = pushes.find((name) => {
      const r = nodeResourceOf(name);
      return r?.construct === 'image' && r.part === 'push' && r.node === node;
    });
    if (push === undefined) return undefined;
    gone.push({ node, pushAddress: `null_resource.${push}` });
  }
  return gone.sort((a, b) => a.node.localeCompare(b.node));
}

/**
 * `plan([])`, and when it fails only because tags are gone, `plan(<their pushes>)`; says which
 * nodes through `progress`. Returns the plan and the nodes whose image is pushed again.
 */
export async function planPushingGoneTags<P>(
  plan: (replace: readonly string[]) => Promise<P>,
  readGraph: () => Promise<{ resource?: Record<string, Record<string, unknown>> }>,
  tagRefOf: (node: string) => string | undefined,
  progress: (line: string) => void,
): Promise<{ plan: P; pushedAgain: ReadonlySet<string> }> {
  try {
    return { plan: await plan([]), pushedAgain: new Set() };
  } catch (err) {
    const gone = goneTags(err, await readGraph());
    if (gone === undefined) throw err;
    for (const g of gone) {
      progress(`the registry no longer has the image of node ${g.node} (${tagRefOf(g.node) ?? 'its tag'}): its push is planned again (tofu plan -replace=${g.pushAddress})`);
    }
    return { plan: await plan(gone.map((g) => g.pushAddress)), pushedAgain: new Set(gone.map((g) => g.node)) };
  }
}

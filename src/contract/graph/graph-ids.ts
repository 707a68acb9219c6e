/**
 * The construct IDs of a target's graph (stacks/target-stack.ts, stacks/node.ts,
 * stacks/spire-identity.ts) and the way back from a resource's name to what it belongs to
 * (src/workflow/summary/plan-summary.ts, claim-guard.ts, destroy-plan.ts, node-copies.ts).
 *
 * CDKTF names a resource after its construct path, `<construct>_<part>_<8 hex of its hash>`
 * (cdktf/lib/private/unique.js, makeUniqueId): `image-<node>_push_0A1B2C3D`.
 */

/** The parts of each per-node construct, by the construct ID's prefix. */
export const NODE_PARTS = {
  /** NodeImage (stacks/node.ts): the push of the image, its digest read, the digest recorded at the push. */
  image: ['push', 'digest', 'pushed-digest'],
  /** NodeWorkload (stacks/node.ts): machine ID, claim, service account, Deployment, rollout step. */
  node: ['machine-id', 'state', 'account', 'deployment', 'rollout'],
} as const;

export type NodeConstruct = keyof typeof NODE_PARTS;
export type ImagePart = (typeof NODE_PARTS.image)[number];
export type WorkloadPart = (typeof NODE_PARTS.node)[number];
export type NodePart = ImagePart | WorkloadPart;

/** The construct ID of a node's image (`image-<node>`) or workload (`node-<node>`). */
export function nodeConstructId(construct: NodeConstruct, node: string): string {
  return `${construct}-${node}`;
}

/** The construct ID of a target's SPIRE part, and its parts that plan-summary says in words. */
export const SPIRE_CONSTRUCT = 'spire';
export const SPIRE_PARTS = ['handoff', 'agent-config-map'] as const;
export type SpirePart = (typeof SPIRE_PARTS)[number];

/** What a resource of a node is: `{construct: 'node', node: 'web', part: 'deployment'}`. */
export type NodeResource =
  | { readonly construct: 'image'; readonly node: string; readonly part: ImagePart }
  | { readonly construct: 'node'; readonly node: string; readonly part: WorkloadPart };

const HASH = /^[0-9A-F]{8}$/;
// a node name is a DNS-1123 label (src/config/names.ts)
const NODE_NAME = /^[a-z0-9-]+$/;

/** `<construct>_<part>_<hash>` split, or undefined when the name is not of that shape. */
function splitName(name: string): { construct: string; part: string } | undefined {
  const words = name.split('_');
  if (words.length !== 3 || !HASH.test(words[2]!)) return undefined;
  return { construct: words[0]!, part: words[1]! };
}

/** The node and part a resource name belongs to, or undefined for a resource of the target. */
export function nodeResourceOf(name: string): NodeResource | undefined {
  const s = splitName(name);
  if (!s) return undefined;
  for (const construct of Object.keys(NODE_PARTS) as NodeConstruct[]) {
    const prefix = `${construct}-`;
    if (!s.construct.startsWith(prefix)) continue;
    const node = s.construct.slice(prefix.length);
    const parts: readonly string[] = NODE_PARTS[construct];
    if (!NODE_NAME.test(node) || !parts.includes(s.part)) return undefined;
    return { construct, node, part: s.part } as NodeResource;
  }
  return undefined;
}

/** The SPIRE part a resource name is (the hand-off, the ConfigMap spire-agent), or undefined. */
export function spirePartOf(name: string): SpirePart | undefined {
  const s = splitName(name);
  if (!s || s.construct !== SPIRE_CONSTRUCT) return undefined;
  return (SPIRE_PARTS as readonly string[]).includes(s.part) ? (s.part as SpirePart) : undefined;
}

/** The last step of an address (`data.external.image-web_digest_0A1B2C3D` -> its name). */
export function resourceNameOf(address: string): string {
  return address.split('.').pop() ?? address;
}

/** The target's own resources, by construct ID (stacks/target-stack.ts: top level, no hash). */
export const TARGET_PARTS = ['runtime-class', 'namespace', 'network-policy'] as const;
export type TargetPart = (typeof TARGET_PARTS)[number];

/**
 * What a graph address is about, for people: a part of a node, or of the target (its own, or
 * its SPIRE part); undefined for anything else (a provider, an unknown name). The one way from
 * an address to (node, part): the apply's views (src/workflow/view/) and the plan summary.
 */
export type GraphPart =
  | { readonly scope: 'node'; readonly node: string; readonly part: NodePart }
  | { readonly scope: 'target'; readonly part: TargetPart | SpirePart };

export function graphPartOf(address: string): GraphPart | undefined {
  const name = resourceNameOf(address);
  const n = nodeResourceOf(name);
  if (n) return { scope: 'node', node: n.node, part: n.part };
  const spire = spirePartOf(name);
  if (spire) return { scope: 'target', part: spire };
  return (TARGET_PARTS as readonly string[]).includes(name) ? { scope: 'target', part: name as TargetPart } : undefined;
}

/** The parts of a node as people name them (the views, tofu's errors). */
export const NODE_PART_WORDS: Record<NodePart, string> = {
  push: 'image push',
  digest: 'image digest',
  'pushed-digest': 'digest of the push',
  'machine-id': 'machine ID',
  state: '/var/lib claim',
  account: 'service account',
  deployment: 'Deployment',
  rollout: 'rollout step',
};

/** The target's parts as people name them. */
export const TARGET_PART_WORDS: Record<TargetPart | SpirePart, string> = {
  'runtime-class': 'RuntimeClass',
  namespace: 'namespace',
  'network-policy': 'NetworkPolicy',
  handoff: 'SPIRE hand-off',
  'agent-config-map': 'ConfigMap spire-agent',
};

/** A graph address in words (`charlie: rollout step`, `NetworkPolicy`), or undefined when it is no part we know. */
export function describeGraphAddress(address: string): string | undefined {
  const g = graphPartOf(address);
  if (!g) return undefined;
  return g.scope === 'node' ? `${g.node}: ${NODE_PART_WORDS[g.part]}` : TARGET_PART_WORDS[g.part];
}

/** The graph file of a graph directory, as CDKTF names it (src/graph/synth.ts writes it, tofu reads it). */
export const GRAPH_FILE = 'cdk.tf.json';

/**
 * What a state document of our graphs says runs: its namespace and, per node, the image its
 * Deployment was applied with, the tag that was pushed, whether its rollout step failed (the
 * step is tainted), its machine ID and its /var/lib claim. Read by the node-copy check
 * (node-copies.ts), `deploy status` and `deploy history`. The state is what deploy last
 * applied; the cluster may differ (a rollback, drift).
 * The state is read with the one model of src/contract/graph/tofu-state.ts.
 */
import { z } from 'zod';
import { nodeResourceOf, type NodePart } from '../../contract/graph/graph-ids.js';
import { CONTAINER_NAME } from '../../contract/node-container.js';
import { tofuStateSchema, type TofuInstance } from '../../contract/graph/tofu-state.js';

const NamespaceAttributes = z.looseObject({ metadata: z.array(z.looseObject({ name: z.string() })).min(1) });
const PolicyAttributes = z.looseObject({ metadata: z.array(z.looseObject({ namespace: z.string() })).min(1) });
// kubernetes_manifest keeps its manifest as a dynamic value: {"value": <object>, "type": ...}
const DeploymentAttributes = z.looseObject({
  manifest: z.looseObject({
    value: z.looseObject({
      spec: z.looseObject({
        template: z.looseObject({ spec: z.looseObject({ containers: z.array(z.looseObject({ name: z.string(), image: z.string().optional() })) }) }),
      }),
    }),
  }),
});
const PushAttributes = z.looseObject({ triggers: z.looseObject({ ref: z.string() }) });
const UuidAttributes = z.looseObject({ result: z.string() });
const ClaimAttributes = z.looseObject({ metadata: z.array(z.looseObject({ uid: z.string().optional() })).min(1) });

/** What a state of our graphs runs: its namespace and the nodes that have a Deployment in it. */
export interface StateNodes {
  readonly namespace: string | undefined;
  readonly nodes: readonly string[];
}

/** One node as its state holds it. */
export interface StateNode {
  readonly node: string;
  /** The image its Deployment was applied with: `<repository>@sha256:...` (null: not readable). */
  readonly image: string | null;
  /** The tag reference its push pushed (`<repository>:<tag>`). */
  readonly tagRef: string | null;
  /** Its rollout step is tainted: the last rollout failed (the next apply runs it again). */
  readonly rolloutFailed: boolean;
  readonly machineId: string | null;
  /** The UID of its /var/lib claim: a new one means the claim was made again (empty). */
  readonly claimUid: string | null;
}

export interface StateFacts {
  readonly serial: number | undefined;
  readonly namespace: string | undefined;
  /** The nodes with a Deployment instance, sorted by name. */
  readonly nodes: readonly StateNode[];
}

/** The facts of a state document, or undefined for a body that is not a state of ours. */
export function readStateFacts(body: Buffer): StateFacts | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = tofuStateSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const managed = (parsed.data.resources ?? []).filter((r) => r.mode === 'managed' && r.instances.length > 0);
  // node -> part -> its (one) instance
  const parts = new Map<string, Map<NodePart, TofuInstance>>();
  for (const r of managed) {
    const owner = nodeResourceOf(r.name);
    if (!owner) continue;
    if (!parts.has(owner.node)) parts.set(owner.node, new Map());
    parts.get(owner.node)!.set(owner.part, r.instances[0]!);
  }
  const nodes: StateNode[] = [];
  for (const [node, of] of parts) {
    const deployment = of.get('deployment');
    if (!deployment) continue;
    const manifest = DeploymentAttributes.safeParse(deployment.attributes);
    const containers = manifest.success ? manifest.data.manifest.value.spec.template.spec.containers : [];
    const push = PushAttributes.safeParse(of.get('push')?.attributes);
    const uuid = UuidAttributes.safeParse(of.get('machine-id')?.attributes);
    const claim = ClaimAttributes.safeParse(of.get('state')?.attributes);
    nodes.push({
      node,
      image: (containers.find((c) => c.name === CONTAINER_NAME) ?? containers[0])?.image ?? null,
      tagRef: push.success ? push.data.triggers.ref : null,
      rolloutFailed: of.get('rollout')?.status === 'tainted',
      machineId: uuid.success ? uuid.data.result : null,
      claimUid: claim.success ? (claim.data.metadata[0]!.uid ?? null) : null,
    });
  }
  nodes.sort((a, b) => a.node.localeCompare(b.node));
  const nsResource = managed.find((r) => r.type === 'kubernetes_namespace_v1');
  const nsAttributes = NamespaceAttributes.safeParse(nsResource?.instances[0]?.attributes);
  // the admin's namespace (namespaceManagedBy "admin") is only read by the graph: the NetworkPolicy's says it
  const policy = PolicyAttributes.safeParse(managed.find((r) => r.type === 'kubernetes_network_policy_v1')?.instances[0]?.attributes);
  const namespace = nsAttributes.success ? nsAttributes.data.metadata[0]!.name : policy.success ? policy.data.metadata[0]!.namespace : undefined;
  return { serial: parsed.data.serial, namespace, nodes };
}

/**
 * The nodes a state document runs (a `kubernetes_manifest` Deployment resource with an
 * instance, stacks/node.ts) and the namespace they run in (the state's namespace resource:
 * the Deployments depend on it, so a state that runs a node has it); undefined for a body
 * that is not such a state.
 */
export function readStateNodes(body: Buffer): StateNodes | undefined {
  const facts = readStateFacts(body);
  return facts && { namespace: facts.namespace, nodes: facts.nodes.map((n) => n.node) };
}

/** The digest of an image reference (`...@sha256:...`), or the reference when it has none. */
export function digestOf(ref: string): string {
  const at = ref.lastIndexOf('@');
  return at < 0 ? ref : ref.slice(at + 1);
}

/** The tag of a tag reference (`<repository>:<tag>`). */
export function tagOf(tagRef: string): string {
  const colon = tagRef.lastIndexOf(':');
  return colon < 0 || tagRef.slice(colon).includes('/') ? tagRef : tagRef.slice(colon + 1);
}

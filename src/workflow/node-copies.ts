/**
 * A node of this target that another target of the same group runs too: two copies of one
 * machine, each with its own /var/lib and machine ID (law 10: nothing may make that by
 * default). Read from the other targets' states on the backend (the Deployments they hold,
 * and their namespace), never guessed from the plan; plan also names the copies that the
 * other targets chosen in the same run would make.
 */
import { z } from 'zod';
import type { TargetModel } from '../config/target-model.js';
import { names } from '../config/names.js';
import type { StateSource } from '../state/state-source.js';
import { nodeResourceOf } from '../contract/graph-ids.js';

export interface NodeCopy {
  readonly node: string;
  /** This target's namespace. */
  readonly namespace: string;
  readonly otherTarget: string;
  readonly otherNamespace: string;
  readonly otherStateKey: string;
  /** `state`: the other target's state runs it now; `this run`: another target chosen in this plan would. */
  readonly seenIn: 'state' | 'this run';
  readonly words: string;
}

/** What a state of our graphs runs: its namespace and the nodes that have a Deployment in it. */
export interface StateNodes {
  readonly namespace: string | undefined;
  readonly nodes: readonly string[];
}

// https://opentofu.org/docs/language/state/ (format version 4): only what is read here
const StateSchema = z.looseObject({
  resources: z
    .array(
      z.looseObject({
        mode: z.string(),
        type: z.string(),
        name: z.string(),
        instances: z.array(z.looseObject({ attributes: z.unknown() })),
      }),
    )
    .default([]),
});
const NamespaceAttributes = z.looseObject({ metadata: z.array(z.looseObject({ name: z.string() })).min(1) });

/**
 * The nodes a state document runs (a `kubernetes_manifest` Deployment resource with an
 * instance, stacks/node.ts) and the namespace they run in (the state's namespace resource:
 * the Deployments depend on it, so a state that runs a node has it); undefined for a body
 * that is not such a state.
 */
export function readStateNodes(body: Buffer): StateNodes | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = StateSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const managed = parsed.data.resources.filter((r) => r.mode === 'managed' && r.instances.length > 0);
  const nodes = managed
    .filter((r) => r.type === 'kubernetes_manifest')
    .map((r) => nodeResourceOf(r.name))
    .filter((n) => n?.construct === 'node' && n.part === 'deployment')
    .map((n) => n!.node)
    .sort();
  const nsResource = managed.find((r) => r.type === 'kubernetes_namespace_v1');
  const nsAttributes = NamespaceAttributes.safeParse(nsResource?.instances[0]?.attributes);
  const namespace = nsAttributes.success ? nsAttributes.data.metadata[0]!.name : undefined;
  return { namespace, nodes };
}

export interface FindNodeCopiesOptions {
  readonly model: TargetModel;
  /** Every other target of the group (the plan's targets but this one). */
  readonly otherTargets: readonly string[];
  /** The other targets chosen in this run when it only plans: applying them would run their nodes too. */
  readonly plannedAlongside: readonly TargetModel[];
  /** Only read: the states of the other targets. */
  readonly source: Pick<StateSource, 'read'>;
  /** A state that cannot be read as one of ours: said, not fatal (the copy check is advice). */
  readonly onUnreadable: (stateKey: string) => void;
}

export async function findNodeCopies(opts: FindNodeCopiesOptions): Promise<NodeCopy[]> {
  const { model } = opts;
  const mine = new Set(model.nodes.map((n) => n.name));
  const copies: NodeCopy[] = [];
  for (const other of opts.otherTargets) {
    const otherStateKey = names.stateKey(model.group, other);
    const body = await opts.source.read(otherStateKey);
    if (body === undefined) continue;
    const state = readStateNodes(body);
    if (state === undefined) {
      opts.onUnreadable(otherStateKey);
      continue;
    }
    for (const node of state.nodes) {
      if (!mine.has(node)) continue;
      const otherNamespace = state.namespace ?? '(its namespace is not in the state)';
      copies.push({ node, namespace: model.namespace, otherTarget: other, otherNamespace, otherStateKey, seenIn: 'state', words: stateWords(model, node, other, otherNamespace, otherStateKey) });
    }
  }
  for (const other of opts.plannedAlongside) {
    for (const n of other.nodes) {
      if (!mine.has(n.name) || copies.some((c) => c.node === n.name && c.otherTarget === other.target)) continue;
      copies.push({
        node: n.name,
        namespace: model.namespace,
        otherTarget: other.target,
        otherNamespace: other.namespace,
        otherStateKey: other.stateKey,
        seenIn: 'this run',
        words: `node ${n.name} is also a node of target ${other.target} (namespace ${other.namespace}), planned in this same run: applying both runs two copies, in namespaces ${model.namespace} and ${other.namespace}, each with its own /var/lib and machine ID`,
      });
    }
  }
  return copies.sort((a, b) => a.node.localeCompare(b.node) || a.otherTarget.localeCompare(b.otherTarget));
}

function stateWords(model: TargetModel, node: string, other: string, otherNamespace: string, otherStateKey: string): string {
  return (
    `node ${node} already runs in namespace ${otherNamespace} (target ${other}, state ${otherStateKey}); ` +
    `target ${model.target} runs it in namespace ${model.namespace} too: two copies, each with its own /var/lib and machine ID. ` +
    `If one copy is meant, \`deploy destroy --target ${other}\` removes target ${other} (each of its nodes, with their /var/lib)`
  );
}

/**
 * A node of this target that another target of the same group runs too: two copies of one
 * machine, each with its own /var/lib and machine ID (law 10: nothing may make that by
 * default). Read from the other targets' states on the backend (the Deployments they hold,
 * and their namespace), never guessed from the plan; plan also names the copies that the
 * other targets chosen in the same run would make.
 */
import type { TargetModel } from '../../config/target-model.js';
import { names } from '../../config/names.js';
import type { StateSource } from '../../state/source/state-source.js';
import { readStateNodes } from '../status/nodes-in-state.js';

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

/**
 * `deploy history <target>`: every kept version of the target's state, with its time and
 * serial, and what changed per node from the version before: read from the states
 * themselves (consecutive versions compared), so it works from any machine that reaches the
 * backend; the run reports stay with the run that wrote them.
 */
import { requireAbsoluteFile } from '../../config/file-coordinate.js';
import type { BackendCoordinates } from '../../config/backend-coordinates.js';
import { readGroupPlan, targetsOf } from '../../config/load.js';
import { names } from '../../config/names.js';
import { DeployError, ExitCode } from '../../errors.js';
import type { RunContext } from '../run-context.js';
import { openReadOnlySource } from './status-state-source.js';
import { readStateFacts, tagOf, type StateNode } from './nodes-in-state.js';
import { requireStateNamespace, type NamespaceCheck } from './namespace-check.js';

export interface HistoryInputs {
  plan: string;
  /** Show only the newest N versions (their changes still compare with the version before). */
  last?: number | undefined;
  /** The namespace the target was applied in (--namespace, K8S_NAMESPACE): checked against the newest version. */
  namespace?: NamespaceCheck | undefined;
  /** Where the states are (TF_HTTP_ADDRESS, else the embedded backend's data directory). */
  backend: BackendCoordinates;
}

/** One change of one node between two versions. */
export type NodeChange =
  | { readonly node: string; readonly change: 'added'; readonly image: string | null; readonly tag: string | null }
  | { readonly node: string; readonly change: 'removed'; readonly image: string | null }
  | { readonly node: string; readonly change: 'image'; readonly from: string | null; readonly to: string | null; readonly fromTag: string | null; readonly toTag: string | null }
  | { readonly node: string; readonly change: 'rollout-failed' | 'rollout-passed' | 'machine-id' | 'claim' };

export interface HistoryVersion {
  readonly serial: number;
  /** When the backend stored it (ISO). */
  readonly created: string;
  /** A deletion of the state (its versions before stay readable). */
  readonly deleted: boolean;
  /** The version is not a state of deploy's graphs (its changes are unknown). */
  readonly unreadable: boolean;
  readonly changes: readonly NodeChange[];
}

export interface HistoryResult {
  readonly target: string;
  readonly stateKey: string;
  readonly where: string;
  /** Oldest first. */
  readonly versions: readonly HistoryVersion[];
  /** Per node of the newest version: the version at which its image last changed. */
  readonly lastImageChange: readonly { readonly node: string; readonly serial: number; readonly created: string; readonly image: string | null }[];
}

export async function readHistory(target: string, inputs: HistoryInputs, ctx: RunContext): Promise<HistoryResult> {
  const plan = await readGroupPlan(requireAbsoluteFile(inputs.plan, ctx, '--plan'));
  const stateKey = names.stateKey(plan.group, target);
  const source = openReadOnlySource(inputs.backend, ctx.signal);
  try {
    const metas = await source.versions(stateKey);
    if (metas.length === 0) {
      const known = targetsOf(plan);
      const why = known.includes(target) ? `target ${target} was never applied with this backend` : `"${target}" is not a target of group ${plan.group} (its targets: ${known.join(', ')})`;
      throw new DeployError(`no state ${stateKey} in ${source.where}: ${why}`, ExitCode.usage, {
        hint: 'name a target of the plan; `deploy state list` shows the states kept here (TF_HTTP_ADDRESS or DEPLOY_STATE_DIR choose where)',
      });
    }
    // one state per serial (the newest stored with it); a deletion has no body
    const versions: HistoryVersion[] = [];
    const lastChange = new Map<string, { serial: number; created: string; image: string | null }>();
    let before: Map<string, StateNode> = new Map();
    let namespace: string | undefined;
    for (const meta of metas) {
      if (meta.deleted) {
        versions.push({ serial: meta.serial, created: meta.created, deleted: true, unreadable: false, changes: [...before.values()].map((n) => ({ node: n.node, change: 'removed' as const, image: n.image })) });
        before = new Map();
        continue;
      }
      const body = await source.read(stateKey, meta.serial);
      const facts = body && readStateFacts(body);
      if (!facts) {
        versions.push({ serial: meta.serial, created: meta.created, deleted: false, unreadable: true, changes: [] });
        continue;
      }
      namespace = facts.namespace ?? namespace;
      const now = new Map(facts.nodes.map((n) => [n.node, n]));
      const changes = compareNodes(before, now);
      for (const c of changes) {
        if (c.change === 'added' || c.change === 'image') lastChange.set(c.node, { serial: meta.serial, created: meta.created, image: now.get(c.node)!.image });
      }
      versions.push({ serial: meta.serial, created: meta.created, deleted: false, unreadable: false, changes });
      before = now;
    }
    requireStateNamespace(inputs.namespace, target, stateKey, namespace, source.where);
    const shown = inputs.last !== undefined ? versions.slice(-inputs.last) : versions;
    const lastImageChange = [...before.keys()].sort().flatMap((node) => {
      const at = lastChange.get(node);
      return at ? [{ node, ...at }] : [];
    });
    return { target, stateKey, where: source.where, versions: shown, lastImageChange };
  } finally {
    source.close();
  }
}

/** What changed per node from `a` to `b`, sorted by node. */
export function compareNodes(a: ReadonlyMap<string, StateNode>, b: ReadonlyMap<string, StateNode>): NodeChange[] {
  const out: NodeChange[] = [];
  const tag = (n: StateNode | undefined) => (n?.tagRef ? tagOf(n.tagRef) : null);
  for (const node of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const was = a.get(node);
    const now = b.get(node);
    if (!was) {
      out.push({ node, change: 'added', image: now!.image, tag: tag(now) });
      continue;
    }
    if (!now) {
      out.push({ node, change: 'removed', image: was.image });
      continue;
    }
    if (was.image !== now.image) out.push({ node, change: 'image', from: was.image, to: now.image, fromTag: tag(was), toTag: tag(now) });
    if (!was.rolloutFailed && now.rolloutFailed) out.push({ node, change: 'rollout-failed' });
    if (was.rolloutFailed && !now.rolloutFailed) out.push({ node, change: 'rollout-passed' });
    if (was.machineId !== null && was.machineId !== now.machineId) out.push({ node, change: 'machine-id' });
    if (was.claimUid !== null && was.claimUid !== now.claimUid) out.push({ node, change: 'claim' });
  }
  return out;
}

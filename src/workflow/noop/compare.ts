/** What differs between a target's record and its fingerprint now, and what changed behind an apply. */
import { names } from '../../config/names.js';
import { describeGraphAddress, graphPartOf } from '../../contract/graph/graph-ids.js';
import type { TargetFingerprint } from './fingerprint.js';

/**
 * The objects whose fingerprint differs between `before` (taken before the plan) and `after` (after
 * the apply), among the graph's own (`ofTheGraph`: not the namespace's default service account,
 * which its controller makes with it), but for those the apply changed (`changedByApply` of
 * `Kind/name`): a write by someone else during the run, even one that only removed fields and
 * left no field manager.
 */
export function changedBehindTheApply(before: TargetFingerprint, after: TargetFingerprint, changedByApply: (key: string) => boolean, ofTheGraph: (key: string) => boolean): string[] {
  const keys = new Set([...Object.keys(before.objects), ...Object.keys(after.objects)]);
  return [...keys].filter((k) => ofTheGraph(k) && !changedByApply(k) && before.objects[k] !== after.objects[k]).map((k) => `${k}: ${after.objects[k] === undefined ? 'gone' : before.objects[k] === undefined ? 'appeared' : 'changed'} during the run`).sort();
}

export type Difference =
  | { readonly kind: 'same' }
  /**
   * only the graph parts of these nodes (and their objects) differ; `ownObjectsAsRecorded`: their
   * own objects (Deployment, claim, service account) are in the cluster as the record has them
   */
  | { readonly kind: 'nodes'; readonly nodes: readonly string[]; readonly addresses: readonly string[]; readonly ownObjectsAsRecorded: boolean }
  | { readonly kind: 'differs'; readonly reason: string };

type Comparable = Omit<TargetFingerprint, 'foreignWriters'>;

/**
 * What differs between a record and a fingerprint: nothing; only some nodes' parts of the graph
 * (then their own objects may differ too, as their plan will tell); or anything else, in words.
 */
export function compare(record: Comparable, now: Comparable): Difference {
  if (record.inputs !== now.inputs) return { kind: 'differs', reason: 'tofu, its providers, the cluster or identity the kubeconfig and KUBE_* resolve to, or the backend changed' };
  if (record.graph.rest !== now.graph.rest) return { kind: 'differs', reason: 'the graph changed outside the nodes (providers, outputs, backend)' };
  if (record.lineage !== now.lineage || record.serial !== now.serial) return { kind: 'differs', reason: `the state changed (serial ${record.serial} -> ${now.serial})` };
  // each address, as the graph has it now or as the record had it, with the node it belongs to
  const nodeOf = new Map([...Object.keys(record.graph.resources), ...Object.keys(now.graph.resources)].map((a) => [a, graphPartOf(a)]));
  const nodes = new Set<string>();
  for (const [a, part] of nodeOf) {
    if (record.graph.resources[a] === now.graph.resources[a]) continue;
    if (part?.scope !== 'node') return { kind: 'differs', reason: `the graph changed outside the nodes (${describeGraphAddress(a) ?? a})` };
    nodes.add(part.node);
  }
  const addresses = [...nodeOf].filter(([a, part]) => part?.scope === 'node' && nodes.has(part.node) && !a.startsWith('data.')).map(([a]) => a);
  const owned = new Set([...nodes].flatMap((n) => [`Deployment/${names.deployment(n)}`, `PersistentVolumeClaim/${names.stateClaim(n)}`, `ServiceAccount/${names.serviceAccount(n)}`]));
  for (const [k, h] of Object.entries(record.objects)) {
    if (owned.has(k)) continue;
    const n = now.objects[k];
    if (n === undefined) return { kind: 'differs', reason: `${k} is gone from the cluster` };
    if (n !== h) return { kind: 'differs', reason: `${k} changed in the cluster` };
  }
  for (const k of Object.keys(now.objects)) if (!(k in record.objects) && !owned.has(k)) return { kind: 'differs', reason: `${k} appeared in the cluster` };
  if (nodes.size === 0) return { kind: 'same' };
  const ownObjectsAsRecorded = [...owned].every((k) => record.objects[k] === now.objects[k]);
  return { kind: 'nodes', nodes: [...nodes].sort(), addresses: addresses.sort(), ownObjectsAsRecorded };
}

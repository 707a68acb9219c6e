/**
 * Hand edits of the typed objects (the claim, the service account, the namespace, the
 * NetworkPolicy) that their managedFields cannot show: a field removed (a removal leaves no
 * field manager behind), or changed by a write whose manager holds nothing now. Found by the
 * generated drift test (issue 45): a namespace's pod-security label removed with a merge patch,
 * a NetworkPolicy's ingress rule removed with a replace, were set back by tofu but named by no
 * plan.
 *
 * The rule is tofu's own drift: a leaf of such an object's attributes that its refresh reads
 * otherwise than the state holds (someone wrote it since the last apply) and that tofu's plan
 * changes (it differs from the graph: not a computed attribute, not one the graph leaves to
 * the cluster). A leaf the graph changes while the cluster kept the applied value is the
 * graph's change, not drift. Each such leaf that no managedFields edit of the same object names
 * already is a hand edit here, "changed" or "removed by a write that left no field manager",
 * set back by the apply. One rule for every attribute of the provider's schema.
 */
import { names } from '../../config/names.js';
import type { TargetModel } from '../../config/target-model.js';
import type { PlannedChange } from '../../contract/graph/planned-change.js';
import { graphPartOf } from '../../contract/graph/graph-ids.js';
import type { TofuResource } from '../../contract/graph/tofu-state.js';
import { leafChanges } from '../../tools/planfile/template-changes.js';
import { CHANGED, METADATA_MAP_ENTRY, REMOVED, type HandEdit } from './hand-edits.js';
import { schemaKey } from './field-paths.js';

/** The owned typed object a planned change is of (kind, name, node), or undefined. */
function typedObjectOf(model: TargetModel, address: string): { kind: string; name: string; node?: string } | undefined {
  const part = graphPartOf(address);
  if (part?.scope === 'node' && part.part === 'state') return { kind: 'PersistentVolumeClaim', name: names.stateClaim(part.node), node: part.node };
  if (part?.scope === 'node' && part.part === 'account') return { kind: 'ServiceAccount', name: names.serviceAccount(part.node), node: part.node };
  if (part?.scope === 'target' && part.part === 'network-policy') return { kind: 'NetworkPolicy', name: names.networkPolicy() };
  if (part?.scope === 'target' && part.part === 'namespace' && model.namespaceManagedBy !== 'admin') return { kind: 'Namespace', name: model.namespace };
  return undefined;
}

const MAP_ENTRY = /^metadata\[0\]\.(labels|annotations)\.(.+)$/;

/** A provider attribute path as people read it: `metadata[0].labels.a/b` -> `metadata.labels[a/b]`; others as the provider names them. */
export function attributeField(path: string): string {
  const m = MAP_ENTRY.exec(path);
  return m ? `metadata.${m[1]}[${m[2]}]` : path;
}

/**
 * One form for an API field path and a provider attribute path, to tell whether both name the
 * same field: map keys as steps, list indexes and underscores dropped, lower case
 * (`spec.ingress[0].podSelector` and `spec[0].ingress[0].pod_selector[0]` both `spec.ingress.podselector`).
 */
function comparable(field: string): string[] {
  const m = MAP_ENTRY.exec(field) ?? METADATA_MAP_ENTRY.exec(field);
  if (m) return ['metadata', m[1]!, m[2]!];
  return schemaKey(field.replace(/\[\d+\]/g, '')).split('.').filter((s) => s !== '');
}

const within = (a: readonly string[], b: readonly string[]) => a.length <= b.length && a.every((s, i) => s === b[i]);

/**
 * `Kind/name` -> the attributes the state holds for each owned typed object (as the last apply
 * left it): what a field another writer holds is compared with (hand-edits.ts typedEdits).
 */
export function typedAppliedAttributes(model: TargetModel, state: readonly TofuResource[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const r of state) {
    if (r.mode !== 'managed' || r.module !== undefined) continue;
    const o = typedObjectOf(model, `${r.type}.${r.name}`);
    const attributes = r.instances[0]?.attributes;
    if (o !== undefined && attributes !== undefined) out.set(`${o.kind}/${o.name}`, attributes);
  }
  return out;
}

/** The attributes of the managed resource at `address` in a state (root module, one instance). */
function attributesAt(state: readonly TofuResource[], address: string): unknown {
  const [type, name] = address.split('.').slice(-2);
  return state.find((r) => r.mode === 'managed' && r.module === undefined && r.type === type && r.name === name)?.instances[0]?.attributes;
}

/**
 * The hand edits on the typed objects beyond those already `named` (from managedFields):
 * `changes` the plan's, `applied` the state before the plan (as the last apply left it),
 * `refreshed` the plan's prior state (as tofu's refresh read the cluster).
 */
export function typedDriftEdits(
  model: TargetModel,
  changes: readonly PlannedChange[],
  named: readonly HandEdit[],
  applied: readonly TofuResource[],
  refreshed: readonly TofuResource[],
): HandEdit[] {
  const out: HandEdit[] = [];
  for (const c of changes) {
    if (c.changedAttributes === undefined || c.changedAttributes.length === 0) continue;
    const o = typedObjectOf(model, c.address);
    if (o === undefined) continue;
    const before = attributesAt(applied, c.address);
    const now = attributesAt(refreshed, c.address);
    if (before === undefined || now === undefined) continue;
    const planned = c.changedAttributes.map(comparable);
    const already = named.filter((e) => e.kind === o.kind && e.name === o.name).map((e) => comparable(e.field));
    for (const leaf of leafChanges(before, now)) {
      const steps = comparable(leaf.path);
      if (!planned.some((p) => within(p, steps) || within(steps, p))) continue; // not set back: computed, or the cluster's
      if (already.some((a) => within(a, steps) || within(steps, a))) continue;
      out.push({ kind: o.kind, name: o.name, ...(o.node !== undefined ? { node: o.node } : {}), field: attributeField(leaf.path), writer: leaf.absentAfter ? REMOVED : CHANGED, action: 'set-back', inTemplate: false });
    }
  }
  return out;
}

/**
 * The ownership step of an apply (issues 34 and 45): before tofu plans, each node's Deployment
 * that someone else wrote is made the one the state says deploy applied, in one JSON patch per
 * Deployment guarded by its resourceVersion (a write in between makes the server refuse it, and
 * the step reads the object again):
 *   - its spec is written whole, as the state's applied manifest has it (the kept fields, a
 *     `kubectl rollout restart` annotation, carried over), when any field under spec was
 *     written by another writer, added, changed or removed;
 *   - other writers' fields outside spec that the graph does not set (labels, annotations) are
 *     removed one by one;
 *   - with the spec whole, no claim is left under spec but the graph's writers' and the
 *     cluster's (managedFields written without the others, the rollback's among them): a field
 *     whose value the write does not change would otherwise stay its writer's, named as a hand
 *     edit at every plan that no apply can undo.
 * tofu's plan then starts from an object equal to its state: its server-side apply ends with
 * exactly what it planned (no "Provider produced inconsistent result after apply",
 * hashicorp/terraform-provider-kubernetes#2185, #2367, #2487), and no merged object that the API
 * server refuses.
 *
 * Why the spec whole, and not field by field: a field-by-field undo is a table of the API
 * server's rules, and each class it misses stops every apply of the target. Seen (issue 45):
 * fields valid only together (strategy `Recreate` with another writer's `rollingUpdate`: 422),
 * a removed field the API server defaults (a liveness probe removed: tofu planned
 * `successThreshold` null, the server set 1), a field the server mirrors into another
 * (`serviceAccountName` into the deprecated `serviceAccount`). Written whole, the server
 * validates and defaults one object that is the applied one, whatever was written before.
 *
 * Why a step of deploy's own and not the provider: it holds with the stock provider build as
 * with the patched one, and the plan can say, field by field, what it will undo and who wrote it.
 */
import type { GraphDocument } from '../../contract/graph/graph-document.js';
import { sleep } from '../../deadline.js';
import { names } from '../../config/names.js';
import type { TargetModel } from '../../config/target-model.js';
import { FIELD_MANAGER } from '../../contract/field-managers.js';
import { apiFailureOfError } from '../../kube/api-error.js';
import { nodeResourceOf } from '../../contract/graph/graph-ids.js';
import type { TofuResource } from '../../contract/graph/tofu-state.js';
import { typedAppliedAttributes } from './typed-drift.js';
import { findHandEdits, inSpec, METADATA_MAP_ENTRY, KEPT_TEMPLATE_ANNOTATIONS, shortHandEdit, undoes, withoutOtherClaimsInSpec, type HandEdit, type ManagedObject, type ObjectUnderGraph } from './hand-edits.js';

/** A target's object as one LIST read it (target-objects.ts lists them). */
export interface ListedObject {
  readonly kind: string;
  readonly object: ManagedObject;
}

/** JSON patch operations of the ownership step. */
export type EditPatchOp = { op: 'test'; path: string; value: unknown } | { op: 'remove'; path: string } | { op: 'replace' | 'add'; path: string; value: unknown };

/** Writes a JSON patch to a Deployment of the target's namespace as `fieldManager`; the object as it is after. */
export type PatchDeployment = (name: string, ops: readonly EditPatchOp[], fieldManager: string) => Promise<unknown>;
/** Reads a Deployment of the target's namespace again (undefined: gone). */
export type ReadDeployment = (name: string) => Promise<ManagedObject | undefined>;

/**
 * Pairs each listed object with its node, and each node's Deployment with the graph's manifest
 * of it (`graph`: graphManifests of the cdk.tf.json) and the one the state last applied (`state`).
 */
export function objectsUnderGraph(model: TargetModel, listed: readonly ListedObject[], graph: GraphManifests, state: readonly TofuResource[] | undefined): ObjectUnderGraph[] {
  const applied = appliedManifests(state ?? []);
  const typed = typedAppliedAttributes(model, state ?? []);
  const byKey = new Map<string, string>();
  for (const n of model.nodes) {
    byKey.set(`Deployment/${names.deployment(n.name)}`, n.name);
    byKey.set(`PersistentVolumeClaim/${names.stateClaim(n.name)}`, n.name);
    byKey.set(`ServiceAccount/${names.serviceAccount(n.name)}`, n.name);
  }
  const out: ObjectUnderGraph[] = [];
  for (const { kind, object } of listed) {
    if (kind === 'RuntimeClass') continue; // the cluster operator's, only read by the graph
    if (kind === 'Namespace' && model.namespaceManagedBy === 'admin') continue; // the admin's too
    const name = object.metadata?.name ?? '';
    const node = byKey.get(`${kind}/${name}`);
    // objects in the namespace that the graph does not make (a hand-made Deployment) are not deploy's
    if (node === undefined && kind !== 'Namespace' && kind !== 'NetworkPolicy') continue;
    if (kind === 'Deployment' && node !== undefined) {
      const manifest = graph.get(node);
      if (manifest === undefined) continue; // leaving the graph: the plan deletes it
      out.push({ kind, object, node, graph: manifest, applied: applied.get(node) });
    } else out.push({ kind, object, node, applied: typed.get(`${kind}/${name}`) });
  }
  return out;
}

/** The hand edits of a target's objects as listed. */
export function handEditsOf(model: TargetModel, listed: readonly ListedObject[], graph: GraphManifests, state: readonly TofuResource[] | undefined): HandEdit[] {
  return findHandEdits(objectsUnderGraph(model, listed, graph, state));
}

/** The synthesized graph (cdk.tf.json) as far as the hand edits and the ownership step read it. */
export type { GraphDocument } from '../../contract/graph/graph-document.js';

/** node -> the Deployment manifest of the graph. */
export type GraphManifests = ReadonlyMap<string, unknown>;

/** The graph's Deployment manifest of each node. */
export function graphManifests(doc: GraphDocument): GraphManifests {
  const out = new Map<string, unknown>();
  for (const [name, block] of Object.entries(doc.resource?.kubernetes_manifest ?? {})) {
    const part = nodeResourceOf(name);
    if (part?.construct === 'node' && part.part === 'deployment') out.set(part.node, block.manifest);
  }
  return out;
}

/** node -> the Deployment manifest the state holds as applied (a dynamic attribute: `{value, type}` or the value). */
export function appliedManifests(state: readonly TofuResource[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const r of state) {
    if (r.mode !== 'managed' || r.type !== 'kubernetes_manifest') continue;
    const part = nodeResourceOf(r.name);
    if (part?.construct !== 'node' || part.part !== 'deployment') continue;
    const raw = r.instances?.[0]?.attributes?.manifest;
    const value = raw !== null && typeof raw === 'object' && 'value' in raw && 'type' in raw ? (raw as { value: unknown }).value : raw;
    if (value !== undefined && value !== null) out.set(part.node, value);
  }
  return out;
}

/**
 * The JSON patch that removes these fields of one object: a test of the resourceVersion the
 * fields were read at, then the removals, the later items of a list first (each removal shifts
 * the indices after it).
 */
export function removalPatch(resourceVersion: string, pointers: readonly string[]): EditPatchOp[] {
  const sorted = [...new Set(pointers)].sort(comparePointersDescending);
  return [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...sorted.map((path) => ({ op: 'remove' as const, path }))];
}

function comparePointersDescending(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    if (as[i] === bs[i]) continue;
    const [x, y] = [as[i]!, bs[i]!];
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y);
    return numeric ? Number(y) - Number(x) : y.localeCompare(x);
  }
  return bs.length - as.length;
}

export interface UndoOutcome {
  /** The edits undone, per node. */
  readonly removed: readonly HandEdit[];
  /**
   * Nodes whose Deployment spec the step wrote (hand-edits.ts inSpec): their pods may be started,
   * stopped or replaced, and their rollout step must follow and wait for the pod.
   */
  readonly specWritten: readonly string[];
}

/** The edits the step undoes: every Deployment edit but the kept ones. */
export function undoable(e: HandEdit): boolean {
  return e.kind === 'Deployment' && undoes(e);
}

/** Whether the step writes the Deployment's spec whole for these edits (any of them under spec). */
function touchesSpec(edits: readonly HandEdit[]): boolean {
  return edits.some(inSpec);
}

/**
 * The spec the step writes: the applied one, with the live object's kept template annotations
 * (hand-edits.ts KEPT: removing `kubectl rollout restart`'s would restart the pod again).
 */
export function specToWrite(applied: unknown, live: ManagedObject): unknown {
  const spec = structuredClone((applied as { spec?: unknown } | undefined)?.spec) as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined;
  if (spec === undefined || spec === null || typeof spec !== 'object') return undefined;
  const liveAnnotations = (live as { spec?: { template?: { metadata?: { annotations?: Record<string, unknown> } } } }).spec?.template?.metadata?.annotations ?? {};
  for (const key of KEPT_TEMPLATE_ANNOTATIONS) {
    const v = liveAnnotations[key];
    if (typeof v !== 'string') continue;
    spec.template ??= {};
    spec.template.metadata ??= {};
    spec.template.metadata.annotations = { ...(spec.template.metadata.annotations ?? {}), [key]: v };
  }
  return spec;
}

/**
 * The replicas to write first, alone, when the spec written whole changes them: a change of
 * replicas is a scaling event to the Deployment controller, which it handles apart from a
 * rollout, and for a Recreate Deployment with several active ReplicaSets (a hand-made rolling
 * update under way) it does nothing at all: written together with `strategy: Recreate`, the
 * controller kept two template's pods running for good (seen: kubectl scale to 2 and a
 * RollingUpdate strategy, then the spec written whole). Written first, under the live strategy,
 * the scale is carried out (proportionally); then the spec. Undefined: no such write.
 */
export function replicasFirst(spec: unknown, live: ManagedObject): number | undefined {
  const want = (spec as { replicas?: unknown } | undefined)?.replicas;
  const now = (live as { spec?: { replicas?: unknown } }).spec?.replicas;
  return typeof want === 'number' && typeof now === 'number' && want !== now ? want : undefined;
}

/**
 * Reads the Deployment until its controller observed its generation (status.observedGeneration),
 * every 200 ms for at most `deadlineMs` (the controller takes milliseconds here); the object as
 * last read, observed or not (the spec's write then follows all the same).
 */
export async function waitObserved(read: ReadDeployment, name: string, signal?: AbortSignal, deadlineMs = 30_000): Promise<ManagedObject | undefined> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const o = (await read(name)) as (ManagedObject & { metadata?: { generation?: number }; status?: { observedGeneration?: number } }) | undefined;
    if (o === undefined || (o.status?.observedGeneration ?? 0) >= (o.metadata?.generation ?? 0) || Date.now() >= until || signal?.aborted) return o;
    await sleep(200, signal);
  }
}

type StringMap = Record<string, unknown>;
const METADATA_MAPS = ['labels', 'annotations'] as const;

/**
 * The step's patch of one Deployment: the test of its resourceVersion; each metadata map
 * (labels, annotations) that holds an edit written whole: the live map, without the entries
 * another writer added, with the graph's entries another writer changed or removed set again to
 * the applied value (the provider takes a manifest's labels and annotations as computed, so
 * tofu never sets them back: found by the generated drift test), so that a map removed whole
 * (`metadata.labels` by a merge patch: seed 526597302 round 166) is made again, where an entry
 * added to a map that is gone was refused; the other removals outside spec; and the spec whole
 * (or, without an applied spec, the removals under it). `live`: the object as read.
 */
export function ownershipPatch(resourceVersion: string, edits: readonly HandEdit[], spec: unknown, appliedMetadata?: unknown, live?: ManagedObject): EditPatchOp[] {
  const whole = spec !== undefined && touchesSpec(edits);
  const maps = new Map<(typeof METADATA_MAPS)[number], StringMap>();
  const mapOf = (name: (typeof METADATA_MAPS)[number]): StringMap => {
    let m = maps.get(name);
    if (m === undefined) maps.set(name, (m = { ...((live?.metadata as Record<string, StringMap | undefined> | undefined)?.[name] ?? {}) }));
    return m;
  };
  const inMap = (e: HandEdit) => (e.action === 'remove' || e.action === 'set-back' ? METADATA_MAP_ENTRY.exec(e.field) : null);
  for (const e of edits) {
    const m = inMap(e);
    if (m === null) continue;
    const name = m[1] as (typeof METADATA_MAPS)[number];
    const key = m[2]!;
    if (e.action === 'remove') delete mapOf(name)[key];
    else {
      const value = (appliedMetadata as Record<string, StringMap | undefined> | undefined)?.[name]?.[key];
      if (typeof value === 'string') mapOf(name)[key] = value;
    }
  }
  const pointers = edits.filter((e) => e.action === 'remove' && e.pointer !== undefined && inMap(e) === null && !(whole && e.pointer.startsWith('/spec/'))).map((e) => e.pointer!);
  const ops = removalPatch(resourceVersion, pointers);
  // (`add` of a member sets it whether or not it is there)
  for (const name of METADATA_MAPS) if (maps.has(name)) ops.push({ op: 'add', path: `/metadata/${name}`, value: maps.get(name)! });
  if (!whole) return ops;
  // the spec whole, and no claim left in it but the graph's and the cluster's (hand-edits.ts withoutOtherClaimsInSpec)
  const managedFields = withoutOtherClaimsInSpec(live?.metadata?.managedFields);
  return [...ops, { op: 'replace', path: '/spec', value: spec }, ...(managedFields ? [{ op: 'replace' as const, path: '/metadata/managedFields', value: managedFields }] : [])];
}

const ATTEMPTS = 3;

/**
 * Undoes every undoable edit of the nodes' Deployments (ownershipPatch). A Deployment written in
 * between (its resourceVersion moved) is read again and its edits found again, up to three
 * times; then the step fails, naming it (the apply has changed nothing yet but the Deployments
 * before it). `appliedOf`: the manifest the state holds as applied for a Deployment (by name).
 */
export async function undoHandEdits(
  edits: readonly HandEdit[],
  io: {
    readonly patch: PatchDeployment;
    readonly read: ReadDeployment;
    readonly editsOf: (object: ManagedObject) => readonly HandEdit[];
    readonly objectOf: (name: string) => ManagedObject | undefined;
    readonly appliedOf: (name: string) => unknown;
    /** Waits until the Deployment controller observed the Deployment's generation (the object as written); the object then. */
    readonly observed: (name: string) => Promise<ManagedObject | undefined>;
  },
  say: (line: string) => void,
): Promise<UndoOutcome> {
  const removed: HandEdit[] = [];
  const specWritten = new Set<string>();
  const byObject = new Map<string, HandEdit[]>();
  for (const e of edits) if (undoable(e)) byObject.set(e.name, [...(byObject.get(e.name) ?? []), e]);
  for (const [name, first] of byObject) {
    let now: readonly HandEdit[] = first;
    let object = io.objectOf(name);
    // the replicas written first, alone: whatever follows (the spec's write refused because the
    // controller moved the object meanwhile, and nothing left to write when read again), those
    // edits are undone and the node's pods move, so its rollout step must wait for them (seed
    // 583964702 round 9: replicas set back, then nothing said, no record, no wait)
    let scaled: HandEdit[] = [];
    for (let attempt = 1; ; attempt++) {
      const todo = now.filter(undoable);
      const version = object?.metadata?.resourceVersion;
      if (object === undefined || version === undefined) break;
      const applied = io.appliedOf(name);
      const spec = specToWrite(applied, object);
      const ops = ownershipPatch(version, todo, spec, (applied as { metadata?: unknown } | undefined)?.metadata, object);
      if (ops.length <= 1) break; // (only the test: nothing this step can write; tofu sets it back)
      try {
        const replicas = ops.some((o) => o.op === 'replace') ? replicasFirst(spec, object) : undefined;
        if (replicas !== undefined) {
          await io.patch(name, [{ op: 'test', path: '/metadata/resourceVersion', value: version }, { op: 'replace', path: '/spec/replicas', value: replicas }], FIELD_MANAGER);
          if (scaled.length === 0) {
            scaled = todo.filter((e) => e.field === 'spec.replicas');
            specWritten.add(todo[0]?.node ?? name);
          }
          const observed = await io.observed(name);
          const after = observed?.metadata?.resourceVersion;
          if (after === undefined) break;
          ops[0] = { op: 'test', path: '/metadata/resourceVersion', value: after };
        }
        await io.patch(name, ops, FIELD_MANAGER);
        removed.push(...todo, ...scaled.filter((e) => !todo.includes(e)));
        scaled = [];
        const node = todo[0]?.node ?? name;
        if (replicas !== undefined || ops.some((o) => o.path === '/spec' || o.path.startsWith('/spec/'))) specWritten.add(node);
        const whole = ops.some((o) => o.op === 'replace');
        say(`${node}: undid ${todo.length} hand edit${todo.length === 1 ? '' : 's'} of its Deployment${whole ? ' (its spec written whole, as last applied)' : ''} (${todo.map(shortHandEdit).join('; ')})`);
        break;
      } catch (err) {
        if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
        object = await io.read(name);
        if (object === undefined) break;
        now = io.editsOf(object);
      }
    }
    if (scaled.length > 0) {
      removed.push(...scaled);
      say(`${scaled[0]!.node ?? name}: undid ${scaled.length} hand edit${scaled.length === 1 ? '' : 's'} of its Deployment (${scaled.map(shortHandEdit).join('; ')})`);
    }
  }
  return { removed, specWritten: [...specWritten].sort() };
}

/**
 * The object moved since it was read: a write conflict (409), or the patch's test of the
 * resourceVersion failed (a 422 that names no field: test/fixtures/api-answers/invalid-patch-test.json).
 * A 422 with causes is the object itself refused (an invalid field): no retry mends it.
 */
function isConflict(err: unknown): boolean {
  const f = apiFailureOfError(err);
  return f !== undefined && (f.code === 409 || (f.code === 422 && f.causes.length === 0));
}

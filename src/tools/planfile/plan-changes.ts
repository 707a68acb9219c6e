/**
 * The changes of a saved plan read in-process, without `tofu show -json`: what
 * src/tools/planfile/tofu-plan-json.ts makes of the shown plan, made here from the plan file itself.
 *
 * Why: `tofu show -json` starts every provider for its schema and loads the state again: 2.3 to
 * 3.0 s of a 1-node apply of a 50-node group (issue 22's P2), 5 to 6 s after a full plan. The
 * plan file is a zip archive (plan-file.ts) whose entry `tfplan` is a protocol buffer
 * (OpenTofu's internal/plans/internal/planproto/planfile.proto, format version 3) and whose
 * values are cty's msgpack. Only what the runtime reads is decoded: each instance's address,
 * actions, reason and replace paths, the map keys of `triggers`/`data` that change, and the
 * root outputs as planned. No schema is needed for that: objects and maps are msgpack maps,
 * lists and sets arrays, unknown values an extension type (cty/msgpack/unknown.go).
 *
 * OpenTofu documents the plan file as internal, and new value encodings may come without a
 * version bump (https://opentofu.org/docs/internals/json-format/ says to read plans through
 * `tofu show -json`). So any doubt throws: another format version, a field the .proto of
 * OpenTofu 1.12 does not declare (protobuf-wire.ts), a field in another wire type, a field
 * this reader needs that is not there, a value cty's msgpack reader cannot decode
 * (cty-msgpack.ts), an action or reason it does not know, an object whose attributes differ
 * before and after. The caller then runs `tofu show -json` (tofu.ts planGraph) and says why.
 * The integration test compares both readers on real plans of every action.
 *
 * The layers below: planfile-proto.ts (the .proto's messages and enums), protobuf-wire.ts (the
 * wire format), cty-msgpack.ts (the values) and cty-json.ts (the values as `tofu show -json`
 * writes them); this module gives them their meaning.
 */
import type { PlannedResourceChange } from '../../contract/graph/planned-change.js';
import type { TofuResource } from '../../contract/graph/tofu-state.js';
import { hasUnknown, jsonLike, unknownMarks } from './cty-json.js';
import { readSavedPlan, type SavedPlan } from './plan-file.js';
import { ACTIONS, changeOf, dynamicValue, FORMAT_VERSION, MODES, OUTPUT_CHANGE, PLAN, pathOf, REASONS, RESOURCE_CHANGE, VALUE_COUNT } from './planfile-proto.js';
import { fields } from './protobuf-wire.js';
import { changedAttributesOf, templateChangesOf } from './template-changes.js';
import { changedKeysOf, formatAttributePath, type PlannedOutput, type ShownPlan } from './tofu-plan-json.js';

export { UNKNOWN, msgpack } from './cty-msgpack.js';

/** The changes and planned outputs of a saved plan (plan-file.ts readSavedPlan), as `tofu show -json` gives them. */
export function planChanges(saved: SavedPlan): ShownPlan {
  if (saved.tfplan === undefined) throw new Error('no entry tfplan');
  try {
    return decodePlan(saved.tfplan, taintedIn(saved.state));
  } catch (err) {
    throw new Error(`entry tfplan: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** The same, read from the file `planFile`. */
export async function readPlanChanges(planFile: string): Promise<ShownPlan> {
  return planChanges(await readSavedPlan(planFile));
}

/** The plan's protocol buffer into changes (no-ops left out) and outputs; `tainted`: addresses tainted in the prior state. */
export function decodePlan(tfplan: Buffer, tainted: ReadonlySet<string>): ShownPlan {
  let version: number | undefined;
  const rows: { address: string; deposed: string; change: PlannedResourceChange }[] = [];
  const outputs: Record<string, PlannedOutput> = {};
  const pending: Buffer[][] = [[], []];
  for (const f of fields(tfplan, PLAN)) {
    if (f.no === 1) version = f.int();
    else if (f.no === 3) pending[0]!.push(f.bytes());
    else if (f.no === 4) pending[1]!.push(f.bytes());
    else if (f.no === 17 && !MODES.has(f.int())) throw new Error(`unknown plan mode ${f.int()}`);
    // an errored plan is incomplete (tofu refuses to apply it)
    else if (f.no === 20 && f.int() !== 0) throw new Error('the plan is marked errored');
  }
  // the version first: the rest is read only in the format this reader knows
  if (version !== FORMAT_VERSION) throw new Error(`plan file format ${version ?? '(none)'}, this reader knows ${FORMAT_VERSION}`);
  for (const b of pending[0]!) rows.push(resourceChange(b, tainted));
  for (const b of pending[1]!) {
    const [name, output] = outputChange(b);
    if (output !== undefined) outputs[name] = output;
  }
  // tofu show -json's order (jsonplan MarshalResourceChanges: by address, then deposed key)
  rows.sort((a, b) => compareAddresses(a.change, b.change) || (a.deposed < b.deposed ? -1 : a.deposed > b.deposed ? 1 : 0));
  const changes = rows.map((r) => r.change).filter((c) => !(c.actions.length === 1 && c.actions[0] === 'no-op'));
  return { changes, outputs };
}

function resourceChange(buf: Buffer, tainted: ReadonlySet<string>): { address: string; deposed: string; change: PlannedResourceChange } {
  let address = '';
  let deposed = '';
  let reason = 0;
  let change: { action: number; values: unknown[] } | undefined;
  const replace: (string | number)[][] = [];
  for (const f of fields(buf, RESOURCE_CHANGE)) {
    if (f.no === 13) address = f.text();
    else if (f.no === 7) deposed = f.text();
    else if (f.no === 9) change = changeOf(f.bytes());
    else if (f.no === 11) replace.push(pathOf(f.bytes()));
    else if (f.no === 12) reason = f.int();
  }
  if (!address || change === undefined) throw new Error('a resource change without address or change');
  const actions = ACTIONS[change.action];
  if (actions === undefined) throw new Error(`${address}: unknown action ${change.action}`);
  if (!(reason in REASONS)) throw new Error(`${address}: unknown action reason ${reason}`);
  const { before, after } = beforeAndAfter(change.action, change.values, address);
  requireSameAttributes(before, after, address);
  const { mode, type, name } = addressParts(address);
  const [prior, json, marks] = [jsonLike(before), jsonLike(after), unknownMarks(after)];
  const changedKeys = changedKeysOf(prior, json, marks);
  const templateChanges = templateChangesOf(prior, json, marks);
  const changedAttributes = changedAttributesOf(type, actions, prior, json, marks);
  return {
    address,
    deposed,
    change: {
      address,
      mode,
      type,
      name,
      actions,
      actionReason: REASONS[reason],
      ...(tainted.has(address) && !deposed ? { wasTainted: true } : {}),
      ...changedKeys,
      ...templateChanges,
      ...changedAttributes,
      ...(replace.length > 0 ? { replacePaths: replace.map(formatAttributePath) } : {}),
    },
  };
}

function outputChange(buf: Buffer): [string, PlannedOutput | undefined] {
  let name = '';
  let sensitive = false;
  let change: { action: number; values: unknown[] } | undefined;
  for (const f of fields(buf, OUTPUT_CHANGE)) {
    if (f.no === 1) name = f.text();
    else if (f.no === 2) change = changeOf(f.bytes());
    else if (f.no === 3) sensitive = f.int() !== 0;
  }
  if (!name || change === undefined) throw new Error('an output change without name or change');
  // jsonplan marshalPlannedOutputs: no deleted outputs; a value only when wholly known
  if (change.action === 5) return [name, undefined];
  const { after } = beforeAndAfter(change.action, change.values, `output ${name}`);
  // outputs are encoded as dynamic values: [type as JSON, value]; a known null is a value
  // (jsonplan marshalPlannedOutputs: After wholly known, null included, as with a manifest's
  // uid planned null after an update), an unknown anywhere in it none
  const value = after === undefined ? undefined : dynamicValue(after);
  return [name, { ...(value !== undefined && !hasUnknown(value) ? { value } : {}), sensitive }];
}

/** planfile/tfplan.go changeFromTfplan: which of `values` is before and which after, by action. */
function beforeAndAfter(action: number, values: unknown[], what: string): { before: unknown; after: unknown } {
  const count = VALUE_COUNT[action];
  if (count === undefined) throw new Error(`${what}: unknown action ${action}`);
  if (values.length !== count) throw new Error(`${what}: ${values.length} values for action ${action}, which has ${count}`);
  switch (action) {
    case 0: // no-op: one value, both
      return { before: values[0], after: values[0] };
    case 1: // create
      return { before: undefined, after: values[0] };
    case 5: // delete
    case 8: // forget
      return { before: values[0], after: undefined };
    default: // read, update, the replaces
      return { before: values[0], after: values[1] };
  }
}

/**
 * cty's msgpack writes every attribute of an object, null or not, and a resource's before and
 * after are of one schema: an attribute on one side only is a value this reader would take
 * for "none" (a missing field), so it is unsure instead.
 */
function requireSameAttributes(before: unknown, after: unknown, address: string): void {
  if (!isObject(before) || !isObject(after)) return;
  const a = Object.keys(before).sort();
  const b = Object.keys(after).sort();
  const missing = [...a.filter((k) => !b.includes(k)).map((k) => `${k} (after)`), ...b.filter((k) => !a.includes(k)).map((k) => `${k} (before)`)];
  if (missing.length > 0) throw new Error(`${address}: attribute ${missing.join(', ')} missing`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** `kubernetes_manifest.x` / `data.external.y` / `module.m.null_resource.z[0]` -> mode, type, name */
function addressParts(address: string): { mode: string; type: string; name: string } {
  const parts = address.split('.');
  while (parts[0] === 'module' && parts.length > 2) parts.splice(0, 2);
  const data = parts[0] === 'data';
  const [type = '', ...rest] = data ? parts.slice(1) : parts;
  return { mode: data ? 'data' : 'managed', type, name: rest.join('.').replace(/\[.*$/, '') };
}

/** addrs.AbsResourceInstance.Less, for the addresses deploy's graphs have (root module): data first, then type, name, key. */
function compareAddresses(a: PlannedResourceChange, b: PlannedResourceChange): number {
  if (a.mode !== b.mode) return a.mode === 'data' ? -1 : 1;
  for (const [x, y] of [[a.type, b.type], [a.name, b.name], [a.address, b.address]] as const) if (x !== y) return x < y ? -1 : 1;
  return 0;
}

/** Addresses of the tainted instances of a state (version 4), as `tofu show -json` writes them. */
function taintedIn(state: readonly TofuResource[]): Set<string> {
  const out = new Set<string>();
  for (const r of state) {
    for (const i of r.instances ?? []) {
      if (i.status !== 'tainted') continue;
      const key = i.index_key === undefined ? '' : typeof i.index_key === 'number' ? `[${i.index_key}]` : `[${JSON.stringify(i.index_key)}]`;
      out.add(`${r.module ? `${r.module}.` : ''}${r.mode === 'data' ? 'data.' : ''}${r.type}.${r.name}${key}`);
    }
  }
  return out;
}

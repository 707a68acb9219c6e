/**
 * OpenTofu's plan file protocol buffer (internal/plans/internal/planproto/planfile.proto,
 * format version 3, as of OpenTofu 1.12): its messages' fields, its enums as `tofu show
 * -json` names them, and the readers of its small messages (a change's values, a path, a
 * dynamic value). plan-changes.ts reads the plan's meaning from them.
 */
import { UNKNOWN, msgpack } from './cty-msgpack.js';
import { fields, type MessageShape } from './protobuf-wire.js';

/** The plan file format this reader knows (planfile/tfplan.go tfplanFormatVersion). */
export const FORMAT_VERSION = 3;

// planfile.proto's messages (OpenTofu 1.12, internal/plans/internal/planproto): every field
// declared, read or not; a field not here is one this reader has never seen
export const PLAN: MessageShape = {
  name: 'Plan',
  fields: { 1: 'varint', 2: 'bytes', 3: 'bytes', 4: 'bytes', 5: 'bytes', 6: 'bytes', 13: 'bytes', 14: 'bytes', 15: 'bytes', 16: 'bytes', 17: 'varint', 18: 'bytes', 19: 'bytes', 20: 'varint', 21: 'bytes', 22: 'bytes', 500000000: 'bytes' },
};
export const RESOURCE_CHANGE: MessageShape = { name: 'ResourceInstanceChange', fields: { 7: 'bytes', 8: 'bytes', 9: 'bytes', 10: 'bytes', 11: 'bytes', 12: 'varint', 13: 'bytes', 14: 'bytes' } };
export const CHANGE: MessageShape = { name: 'Change', fields: { 1: 'varint', 2: 'bytes', 3: 'bytes', 4: 'bytes', 5: 'bytes', 6: 'bytes', 7: 'bytes', 8: 'bytes' } };
export const OUTPUT_CHANGE: MessageShape = { name: 'OutputChange', fields: { 1: 'bytes', 2: 'bytes', 3: 'varint' } };
export const DYNAMIC_VALUE: MessageShape = { name: 'DynamicValue', fields: { 1: 'bytes' } };
export const PATH: MessageShape = { name: 'Path', fields: { 1: 'bytes' } };
export const STEP: MessageShape = { name: 'Path.Step', fields: { 1: 'bytes', 2: 'bytes' } };

/** planfile.proto enum Mode: NORMAL, DESTROY, REFRESH_ONLY */
export const MODES = new Set([0, 1, 2]);

/** How many values a Change holds, by action (planfile/tfplan.go changeFromTfplan). */
export const VALUE_COUNT: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 5: 1, 6: 2, 7: 2, 8: 1, 10: 2 };

// planfile.proto: enum Action and enum ResourceInstanceActionReason, as `tofu show -json` names them
export const ACTIONS: Record<number, string[]> = {
  0: ['no-op'],
  1: ['create'],
  2: ['read'],
  3: ['update'],
  5: ['delete'],
  6: ['delete', 'create'],
  7: ['create', 'delete'],
  8: ['forget'],
  10: ['forget', 'create'],
};
export const REASONS: Record<number, string | undefined> = {
  0: undefined,
  1: 'replace_because_tainted',
  2: 'replace_by_request',
  3: 'replace_because_cannot_update',
  4: 'delete_because_no_resource_config',
  5: 'delete_because_wrong_repetition',
  6: 'delete_because_count_index',
  7: 'delete_because_each_key',
  8: 'delete_because_no_module',
  9: 'replace_by_triggers',
  10: 'read_because_config_unknown',
  11: 'read_because_dependency_pending',
  12: 'delete_because_no_move_target',
  13: 'read_because_check_nested',
  14: 'delete_because_enabled_false',
  15: 'forgot_because_lifecycle_destroy_in_state',
  16: 'forgot_because_lifecycle_destroy_in_config',
};

/** message Change: its action and its values (msgpack decoded). */
export function changeOf(buf: Buffer): { action: number; values: unknown[] } {
  let action = 0;
  const values: unknown[] = [];
  // proto3 leaves out a field at its default: no action field is NOOP (0)
  for (const f of fields(buf, CHANGE)) {
    if (f.no === 1) action = f.int();
    else if (f.no === 2) values.push(dynamicValueBytes(f.bytes()));
  }
  return { action, values };
}

/** message DynamicValue { bytes msgpack = 1; } decoded; tofu always writes its bytes (a null is msgpack nil), so none is a doubt */
function dynamicValueBytes(buf: Buffer): unknown {
  let value: { v: unknown } | undefined;
  for (const f of fields(buf, DYNAMIC_VALUE)) value = { v: msgpack(f.bytes()) };
  if (value === undefined) throw new Error('a DynamicValue without its msgpack');
  return value.v;
}

/** message Path { repeated Step steps = 1; }, a Step an attribute name (1) or an element key (2) */
export function pathOf(buf: Buffer): (string | number)[] {
  const steps: (string | number)[] = [];
  for (const f of fields(buf, PATH)) {
    const before = steps.length;
    for (const s of fields(f.bytes(), STEP)) {
      if (steps.length > before) throw new Error('a path step with two selectors');
      if (s.no === 1) steps.push(s.text());
      else if (s.no === 2) {
        const key = dynamicValueBytes(s.bytes());
        // element keys are encoded as dynamic values too: [type, key]
        const k = dynamicValue(key);
        if (typeof k !== 'string' && typeof k !== 'number') throw new Error('a path step whose key is neither a string nor a number');
        steps.push(k);
      }
    }
    if (steps.length === before) throw new Error('a path step without attribute name or element key');
  }
  return steps;
}

/** A dynamic value, [type as JSON, value]: the value. */
export function dynamicValue(v: unknown): unknown {
  if (v === UNKNOWN || v === null) return v;
  if (!Array.isArray(v) || v.length !== 2 || !(v[0] instanceof Uint8Array || typeof v[0] === 'string')) throw new Error('a dynamic value that is not [type, value]');
  return v[1];
}

/**
 * The changes of a saved plan read in-process, without `tofu show -json`: what
 * src/tools/tofu-plan-json.ts makes of the shown plan, made here from the plan file itself.
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
 * Any doubt (another format version, a field of a wire type not expected, a value this reader
 * cannot decode) throws; the caller then runs `tofu show -json` as before (tofu.ts planGraph).
 * The integration test compares both readers on real plans of every action.
 */
import type { PlannedResourceChange } from '../contract/planned-change.js';
import { readSavedPlan, type SavedPlan, type StateResource } from './plan-file.js';
import { changedKeysOf, formatAttributePath, type PlannedOutput, type ShownPlan } from './tofu-plan-json.js';

/** The plan file format this reader knows (planfile/tfplan.go tfplanFormatVersion). */
const FORMAT_VERSION = 3;

/** A value known only after the apply (msgpack extension 0, or 12 with refinements). */
export const UNKNOWN: unique symbol = Symbol('unknown');

// planfile.proto: enum Action and enum ResourceInstanceActionReason, as `tofu show -json` names them
const ACTIONS: Record<number, string[]> = {
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
const REASONS: Record<number, string | undefined> = {
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

/** The changes and planned outputs of a saved plan (plan-file.ts readSavedPlan), as `tofu show -json` gives them. */
export function planChanges(saved: SavedPlan): ShownPlan {
  if (saved.tfplan === undefined) throw new Error(`the plan file ${saved.file} holds no entry tfplan`);
  return decodePlan(saved.tfplan, taintedIn(saved.state));
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
  for (const f of fields(tfplan)) {
    if (f.no === 1) version = f.int();
    else if (f.no === 3) rows.push(resourceChange(f.bytes(), tainted));
    else if (f.no === 4) {
      const [name, output] = outputChange(f.bytes());
      if (output !== undefined) outputs[name] = output;
    }
  }
  if (version !== FORMAT_VERSION) throw new Error(`plan file format ${version}, this reader knows ${FORMAT_VERSION}`);
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
  for (const f of fields(buf)) {
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
  const { before, after } = beforeAndAfter(change.action, change.values);
  const { mode, type, name } = addressParts(address);
  const changedKeys = changedKeysOf(jsonLike(before), jsonLike(after), unknownMarks(after));
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
      ...(replace.length > 0 ? { replacePaths: replace.map(formatAttributePath) } : {}),
    },
  };
}

function outputChange(buf: Buffer): [string, PlannedOutput | undefined] {
  let name = '';
  let sensitive = false;
  let change: { action: number; values: unknown[] } | undefined;
  for (const f of fields(buf)) {
    if (f.no === 1) name = f.text();
    else if (f.no === 2) change = changeOf(f.bytes());
    else if (f.no === 3) sensitive = f.int() !== 0;
  }
  if (!name || change === undefined) throw new Error('an output change without name or change');
  // jsonplan marshalPlannedOutputs: no deleted outputs; a value only when wholly known
  if (change.action === 5) return [name, undefined];
  const { after } = beforeAndAfter(change.action, change.values);
  // outputs are encoded as dynamic values: [type as JSON, value]
  const value = after === undefined ? undefined : dynamicValue(after);
  return [name, { ...(value !== undefined && value !== null && !hasUnknown(value) ? { value } : {}), sensitive }];
}

/** planfile/tfplan.go changeFromTfplan: which of `values` is before and which after, by action. */
function beforeAndAfter(action: number, values: unknown[]): { before: unknown; after: unknown } {
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

function changeOf(buf: Buffer): { action: number; values: unknown[] } {
  let action = 0;
  const values: unknown[] = [];
  for (const f of fields(buf)) {
    if (f.no === 1) action = f.int();
    else if (f.no === 2) values.push(dynamicValueBytes(f.bytes()));
  }
  return { action, values };
}

/** message DynamicValue { bytes msgpack = 1; } decoded */
function dynamicValueBytes(buf: Buffer): unknown {
  for (const f of fields(buf)) if (f.no === 1) return msgpack(f.bytes());
  return null;
}

/** message Path { repeated Step steps = 1; }, a Step an attribute name (1) or an element key (2) */
function pathOf(buf: Buffer): (string | number)[] {
  const steps: (string | number)[] = [];
  for (const f of fields(buf)) {
    if (f.no !== 1) continue;
    for (const s of fields(f.bytes())) {
      if (s.no === 1) steps.push(s.text());
      else if (s.no === 2) {
        const key = dynamicValueBytes(s.bytes());
        // element keys are encoded as dynamic values too: [type, key]
        const k = dynamicValue(key);
        if (typeof k !== 'string' && typeof k !== 'number') throw new Error('a path step whose key is neither a string nor a number');
        steps.push(k);
      }
    }
  }
  return steps;
}

/** A dynamic value, [type as JSON, value]: the value. */
function dynamicValue(v: unknown): unknown {
  if (v === UNKNOWN || v === null) return v;
  if (!Array.isArray(v) || v.length !== 2 || !(v[0] instanceof Uint8Array || typeof v[0] === 'string')) throw new Error('a dynamic value that is not [type, value]');
  return v[1];
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
function taintedIn(state: readonly StateResource[]): Set<string> {
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

function hasUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(hasUnknown);
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) return Object.values(v).some(hasUnknown);
  return false;
}

/** cty's msgpack of a dynamically typed value: [its type as JSON (bytes), the value]; only these hold bytes. */
function isDynamic(v: unknown): v is [Uint8Array, unknown] {
  return Array.isArray(v) && v.length === 2 && v[0] instanceof Uint8Array;
}

/** The value with unknowns left out (as `after` of `tofu show -json`). */
function jsonLike(v: unknown): unknown {
  if (v === UNKNOWN) return undefined;
  if (isDynamic(v)) return jsonLike(v[1]);
  if (Array.isArray(v)) return v.map(jsonLike);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== UNKNOWN) out[k] = jsonLike(x);
    return out;
  }
  return v;
}

/** `after_unknown` of `tofu show -json`: true where the value is unknown, objects of the same shape elsewhere. */
function unknownMarks(v: unknown): unknown {
  if (v === UNKNOWN) return true;
  if (isDynamic(v)) return unknownMarks(v[1]);
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const m = unknownMarks(x);
      if (m !== undefined) out[k] = m;
    }
    return out;
  }
  return undefined;
}

// ---- protocol buffers: the wire format, fields by number ----

interface Field {
  readonly no: number;
  int(): number;
  bytes(): Buffer;
  text(): string;
}

function* fields(buf: Buffer): Generator<Field> {
  let at = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (at >= buf.length) throw new Error('a protocol buffer ends inside a varint');
      const b = buf[at++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
      if (mul > 2 ** 63) throw new Error('a varint longer than 64 bits');
    }
  };
  while (at < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      const v = varint();
      yield { no, int: () => v, bytes: () => wrong(no, 'bytes'), text: () => wrong(no, 'text') };
    } else if (wire === 2) {
      const len = varint();
      if (at + len > buf.length) throw new Error('a protocol buffer field runs past its end');
      const b = buf.subarray(at, at + len);
      at += len;
      yield { no, int: () => wrong(no, 'a number'), bytes: () => b, text: () => b.toString('utf8') };
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new Error(`protocol buffer wire type ${wire} (field ${no})`);
  }
}

function wrong(no: number, what: string): never {
  throw new Error(`protocol buffer field ${no} is not ${what}`);
}

// ---- msgpack, as cty writes it ----

/** One msgpack value: maps become objects (keys are strings in cty), bin stays bytes, unknowns UNKNOWN. */
export function msgpack(buf: Buffer): unknown {
  const r = new MsgpackReader(buf);
  const v = r.value();
  if (r.at !== buf.length) throw new Error('msgpack has bytes past its value');
  return v;
}

class MsgpackReader {
  at = 0;
  constructor(private readonly buf: Buffer) {}

  value(): unknown {
    const b = this.u(1);
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    if ((b & 0xf0) === 0x80) return this.map(b & 0x0f);
    if ((b & 0xf0) === 0x90) return this.array(b & 0x0f);
    if ((b & 0xe0) === 0xa0) return this.str(b & 0x1f);
    const read = TAGGED[b];
    if (read === undefined) throw new Error(`msgpack byte 0x${b.toString(16)}`);
    return read(this);
  }

  /** a number of `n` bytes at the cursor (64-bit integers as the nearest JS number) */
  read(n: number, at: (buf: Buffer, i: number) => number | bigint): number {
    this.need(n);
    const v = at(this.buf, this.at);
    this.at += n;
    return Number(v);
  }

  u(n: 1 | 2 | 4): number {
    return this.read(n, (b, i) => (n === 1 ? b.readUInt8(i) : n === 2 ? b.readUInt16BE(i) : b.readUInt32BE(i)));
  }

  str(n: number): string {
    this.need(n);
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }

  bin(n: number): Uint8Array {
    this.need(n);
    const b = new Uint8Array(this.buf.subarray(this.at, this.at + n));
    this.at += n;
    return b;
  }

  array(n: number): unknown[] {
    return Array.from({ length: n }, () => this.value());
  }

  map(n: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) {
      const k = this.value();
      const key = typeof k === 'string' ? k : typeof k === 'number' ? String(k) : k instanceof Uint8Array ? Buffer.from(k).toString('utf8') : undefined;
      if (key === undefined) throw new Error('a msgpack map key that is not a string');
      out[key] = this.value();
    }
    return out;
  }

  /** an extension of `n` bytes: cty's unknown value (type 0, or 12 with refinements), nothing else */
  ext(n: number): typeof UNKNOWN {
    this.need(1 + n);
    const type = this.buf.readInt8(this.at);
    this.at += 1 + n;
    if (type !== 0 && type !== 0x0c) throw new Error(`msgpack extension ${type}`);
    return UNKNOWN;
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new Error('msgpack ends early');
  }
}

/** Every msgpack type with a tag byte of its own (the fix* forms are read in MsgpackReader.value). */
const TAGGED: Record<number, (r: MsgpackReader) => unknown> = {
  0xc0: () => null,
  0xc2: () => false,
  0xc3: () => true,
  0xc4: (r) => r.bin(r.u(1)),
  0xc5: (r) => r.bin(r.u(2)),
  0xc6: (r) => r.bin(r.u(4)),
  0xc7: (r) => r.ext(r.u(1)),
  0xc8: (r) => r.ext(r.u(2)),
  0xc9: (r) => r.ext(r.u(4)),
  0xca: (r) => r.read(4, (b, i) => b.readFloatBE(i)),
  0xcb: (r) => r.read(8, (b, i) => b.readDoubleBE(i)),
  0xcc: (r) => r.u(1),
  0xcd: (r) => r.u(2),
  0xce: (r) => r.u(4),
  0xcf: (r) => r.read(8, (b, i) => b.readBigUInt64BE(i)),
  0xd0: (r) => r.read(1, (b, i) => b.readInt8(i)),
  0xd1: (r) => r.read(2, (b, i) => b.readInt16BE(i)),
  0xd2: (r) => r.read(4, (b, i) => b.readInt32BE(i)),
  0xd3: (r) => r.read(8, (b, i) => b.readBigInt64BE(i)),
  0xd4: (r) => r.ext(1),
  0xd5: (r) => r.ext(2),
  0xd6: (r) => r.ext(4),
  0xd7: (r) => r.ext(8),
  0xd8: (r) => r.ext(16),
  0xd9: (r) => r.str(r.u(1)),
  0xda: (r) => r.str(r.u(2)),
  0xdb: (r) => r.str(r.u(4)),
  0xdc: (r) => r.array(r.u(2)),
  0xdd: (r) => r.array(r.u(4)),
  0xde: (r) => r.map(r.u(2)),
  0xdf: (r) => r.map(r.u(4)),
};

/**
 * The in-process plan reader (src/tools/planfile/plan-changes.ts) on hand-made protocol buffers: a
 * plan it reads, and each doubt that makes it throw (so planGraph lets `tofu show -json`
 * read the plan): another format version, a field it does not know, a wire type it does not
 * know, a field it needs that is missing, bytes cut short. Its agreement with `tofu show
 * -json` on real plans is test/integration/plan-changes.test.ts; the decoders' own tests are
 * cty-msgpack.test.ts and protobuf-wire.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodePlan, planChanges } from '../../../../src/tools/planfile/plan-changes.js';

// ---- a tiny protocol buffer and msgpack writer for the tests ----
const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
};
const int = (no: number, v: number) => Buffer.from([...varint(no * 8), ...varint(v)]);
const bytes = (no: number, ...parts: (Buffer | string)[]) => {
  const body = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  return Buffer.concat([Buffer.from([...varint(no * 8 + 2), ...varint(body.length)]), body]);
};
const str = (s: string) => Buffer.concat([Buffer.from([0xa0 | s.length]), Buffer.from(s)]);
/** msgpack of a flat object of strings (fixmap, fixstr), UNKNOWN for a value known after the apply */
const obj = (o: Record<string, string | Record<string, string> | 'unknown'>): Buffer =>
  Buffer.concat([
    Buffer.from([0x80 | Object.keys(o).length]),
    ...Object.entries(o).map(([k, v]) => Buffer.concat([str(k), v === 'unknown' ? Buffer.from([0xd4, 0, 0]) : typeof v === 'string' ? str(v) : obj(v)])),
  ]);
const dynamic = (msgpack: Buffer) => bytes(1, msgpack);
/** ResourceInstanceChange { addr = 13; change = 9 { action = 1; values = 2 ... } } */
const resourceChange = (addr: string, action: number, values: Buffer[], extra: Buffer[] = []) =>
  bytes(3, bytes(13, addr), bytes(9, ...(action === 0 ? [] : [int(1, action)]), ...values.map((v) => bytes(2, v))), ...extra);
const VERSION = int(1, 3);
const CREATE = resourceChange('null_resource.a', 1, [dynamic(obj({ id: 'unknown', triggers: { x: '1' } }))]);
const UPDATE = (after: Record<string, string | Record<string, string> | 'unknown'>) =>
  resourceChange('null_resource.b', 3, [dynamic(obj({ id: 'b', triggers: { x: '1' } })), dynamic(obj(after))]);

describe('decodePlan: a plan of format 3', () => {
  it('GIVEN a create and an update of a trigger THEN it reads both, with the keys that change', () => {
    const plan = decodePlan(Buffer.concat([VERSION, CREATE, UPDATE({ id: 'b', triggers: { x: '2' } })]), new Set());
    expect(plan.changes).toEqual([
      { address: 'null_resource.a', mode: 'managed', type: 'null_resource', name: 'a', actions: ['create'], actionReason: undefined },
      { address: 'null_resource.b', mode: 'managed', type: 'null_resource', name: 'b', actions: ['update'], actionReason: undefined, changedKeys: ['x'] },
    ]);
  });

  it('GIVEN outputs known, known null and unknown THEN a value for the first two only (as tofu show -json)', () => {
    // OutputChange { name = 1; change = 2 { action = 1 (create); values = 2 } }: values are dynamic, [type JSON (bin), value]
    const output = (name: string, msgpack: Buffer) => bytes(4, bytes(1, name), bytes(2, int(1, 1), bytes(2, dynamic(msgpack))));
    const typed = (type: string, value: Buffer) => Buffer.concat([Buffer.from([0x92, 0xc4, type.length]), Buffer.from(type), value]);
    const plan = decodePlan(Buffer.concat([VERSION, output('known', typed('"string"', str('v'))), output('none', typed('"string"', Buffer.from([0xc0]))), output('later', Buffer.from([0xd4, 0, 0]))]), new Set());
    expect(plan.outputs).toEqual({ known: { value: 'v', sensitive: false }, none: { value: null, sensitive: false }, later: { sensitive: false } });
  });

  it('GIVEN an empty plan THEN no changes, no outputs', () => {
    expect(decodePlan(VERSION, new Set())).toEqual({ changes: [], outputs: {} });
  });
});

describe('decodePlan: unsure (throws) rather than wrong', () => {
  it('GIVEN another format version, or none THEN it throws before reading the rest', () => {
    expect(() => decodePlan(int(1, 2), new Set())).toThrow('plan file format 2, this reader knows 3');
    expect(() => decodePlan(int(1, 4), new Set())).toThrow('plan file format 4');
    expect(() => decodePlan(Buffer.alloc(0), new Set())).toThrow('plan file format (none)');
    // a change this reader could not read, in a format it does not know: the version is what it says
    expect(() => decodePlan(Buffer.concat([int(1, 4), bytes(3, int(99, 1))]), new Set())).toThrow('plan file format 4');
  });

  it('GIVEN a field number planfile.proto does not declare THEN it throws naming the message and field', () => {
    expect(() => decodePlan(Buffer.concat([VERSION, int(23, 1)]), new Set())).toThrow('Plan: unknown field 23');
    expect(() => decodePlan(Buffer.concat([VERSION, resourceChange('null_resource.a', 1, [dynamic(obj({}))], [int(15, 1)])]), new Set())).toThrow('ResourceInstanceChange: unknown field 15');
    expect(() => decodePlan(Buffer.concat([VERSION, bytes(3, bytes(13, 'x.y'), bytes(9, int(9, 1)))]), new Set())).toThrow('Change: unknown field 9');
    expect(() => decodePlan(Buffer.concat([VERSION, resourceChange('null_resource.a', 1, [Buffer.concat([dynamic(obj({})), int(2, 1)])])]), new Set())).toThrow('DynamicValue: unknown field 2');
  });

  it('GIVEN a wire type it does not know, or a known field in another wire type THEN it throws', () => {
    // field 3 (resource_changes) with wire type 6
    expect(() => decodePlan(Buffer.concat([VERSION, Buffer.from([0x1e])]), new Set())).toThrow('Plan: field 3 has wire type 6 (unknown), not bytes');
    // the version as a fixed64
    expect(() => decodePlan(Buffer.from([0x09, 3, 0, 0, 0, 0, 0, 0, 0]), new Set())).toThrow('Plan: field 1 has wire type fixed64, not varint');
  });

  it('GIVEN a field it needs that is missing THEN it throws: no address, no change, no msgpack in a value, too few values', () => {
    expect(() => decodePlan(Buffer.concat([VERSION, bytes(3, bytes(9, int(1, 1), bytes(2, dynamic(obj({})))))]), new Set())).toThrow('a resource change without address or change');
    expect(() => decodePlan(Buffer.concat([VERSION, bytes(3, bytes(13, 'null_resource.a'))]), new Set())).toThrow('a resource change without address or change');
    // a DynamicValue with no msgpack field: not "no value"
    expect(() => decodePlan(Buffer.concat([VERSION, resourceChange('null_resource.a', 1, [Buffer.alloc(0)])]), new Set())).toThrow('a DynamicValue without its msgpack');
    // an update has before and after
    expect(() => decodePlan(Buffer.concat([VERSION, resourceChange('null_resource.b', 3, [dynamic(obj({}))])]), new Set())).toThrow('null_resource.b: 1 values for action 3, which has 2');
  });

  it('GIVEN an object attribute on one side only THEN it throws (cty writes every attribute; a missing one is not "no value")', () => {
    expect(() => decodePlan(Buffer.concat([VERSION, UPDATE({ id: 'b' })]), new Set())).toThrow('null_resource.b: attribute triggers (after) missing');
  });

  it('GIVEN an action or a reason it does not know THEN it throws', () => {
    expect(() => decodePlan(Buffer.concat([VERSION, resourceChange('null_resource.a', 9, [dynamic(obj({}))])]), new Set())).toThrow('unknown action 9');
    expect(() => decodePlan(Buffer.concat([VERSION, resourceChange('null_resource.a', 1, [dynamic(obj({}))], [int(12, 42)])]), new Set())).toThrow('unknown action reason 42');
    expect(() => decodePlan(Buffer.concat([VERSION, int(17, 7)]), new Set())).toThrow('unknown plan mode 7');
    expect(() => decodePlan(Buffer.concat([VERSION, int(20, 1)]), new Set())).toThrow('the plan is marked errored');
  });

  it('GIVEN the plan cut short anywhere inside a change THEN it throws', () => {
    const whole = Buffer.concat([VERSION, CREATE]);
    // (a cut between two top-level fields leaves a shorter plan the wire format cannot tell from a whole one)
    for (let end = VERSION.length + 1; end < whole.length; end++) {
      expect(() => decodePlan(whole.subarray(0, end), new Set()), `cut at ${end}`).toThrow();
    }
  });
});

describe('planChanges', () => {
  it('GIVEN no entry tfplan, or one it is unsure of THEN it throws naming the entry', () => {
    expect(() => planChanges({ file: 'p', tfplan: undefined, state: [] })).toThrow('no entry tfplan');
    expect(() => planChanges({ file: 'p', tfplan: Buffer.concat([VERSION, int(23, 1)]), state: [] })).toThrow('entry tfplan: Plan: unknown field 23');
  });
});

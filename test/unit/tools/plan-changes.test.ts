/**
 * The in-process plan reader's decoders on hand-made bytes: cty's msgpack (unknowns plain and
 * refined, dynamic values, every number width) and the protocol buffer's limits. The readers'
 * agreement with `tofu show -json` on real plans is test/integration/plan-changes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodePlan, msgpack, UNKNOWN } from '../../../src/tools/plan-changes.js';

const b = (...bytes: number[]) => Buffer.from(bytes);

describe('msgpack as cty writes it', () => {
  it('reads maps, strings, arrays, bytes and every number width', () => {
    // {"a": [1, -1, "x"]}
    expect(msgpack(b(0x81, 0xa1, 0x61, 0x93, 0x01, 0xff, 0xa1, 0x78))).toEqual({ a: [1, -1, 'x'] });
    expect(msgpack(b(0xcc, 0xff))).toBe(255);
    expect(msgpack(b(0xcd, 0x01, 0x00))).toBe(256);
    expect(msgpack(b(0xd1, 0xff, 0x00))).toBe(-256);
    expect(msgpack(b(0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe))).toBe(-2);
    expect(msgpack(b(0xcf, 0, 0, 0, 1, 0, 0, 0, 0))).toBe(2 ** 32);
    expect(msgpack(Buffer.concat([b(0xcb), (() => { const x = Buffer.alloc(8); x.writeDoubleBE(1.5); return x; })()]))).toBe(1.5);
    expect(msgpack(b(0xc0))).toBeNull();
    expect(msgpack(b(0xc3))).toBe(true);
    expect(msgpack(b(0xc4, 0x02, 0x22, 0x73))).toEqual(new Uint8Array([0x22, 0x73]));
  });

  it('reads an unknown value, plain (fixext1 0) or with refinements (ext 12), as UNKNOWN', () => {
    expect(msgpack(b(0xd4, 0x00, 0x00))).toBe(UNKNOWN);
    // ext8 of 3 bytes, type 12: a refinement map {1: true}
    expect(msgpack(b(0xc7, 0x03, 0x0c, 0x81, 0x01, 0xc3))).toBe(UNKNOWN);
    expect(msgpack(b(0x81, 0xa1, 0x6b, 0xd4, 0x00, 0x00))).toEqual({ k: UNKNOWN });
  });

  it('refuses another extension, a value cut short and bytes past the value', () => {
    expect(() => msgpack(b(0xd4, 0x05, 0x00))).toThrow(/extension 5/);
    expect(() => msgpack(b(0x92, 0x01))).toThrow(/ends early/);
    expect(() => msgpack(b(0x01, 0x02))).toThrow(/past its value/);
  });
});

describe('the plan protocol buffer', () => {
  it('refuses another format version, a plan without one, and a field cut short', () => {
    expect(() => decodePlan(b(0x08, 0x02), new Set())).toThrow(/format 2/);
    expect(() => decodePlan(b(), new Set())).toThrow(/format undefined/);
    // field 3 (a resource change), length 5, only 1 byte there
    expect(() => decodePlan(b(0x08, 0x03, 0x1a, 0x05, 0x00), new Set())).toThrow(/runs past its end/);
  });

  it('reads an empty plan of format 3: no changes, no outputs', () => {
    expect(decodePlan(b(0x08, 0x03), new Set())).toEqual({ changes: [], outputs: {} });
  });
});

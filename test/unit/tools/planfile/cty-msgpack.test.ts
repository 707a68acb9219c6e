/**
 * cty's msgpack read without a schema (src/tools/planfile/cty-msgpack.ts), on hand-made bytes: what it
 * reads, and every doubt it throws on (the plan reader is then unsure and lets `tofu show
 * -json` read the plan).
 */
import { describe, expect, it } from 'vitest';
import { msgpack, UNKNOWN } from '../../../../src/tools/planfile/cty-msgpack.js';

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

  it('GIVEN an encoding it does not know THEN it throws: another extension, the unused tag 0xc1, a map key that is no string', () => {
    expect(() => msgpack(b(0xd4, 0x05, 0x00))).toThrow(/extension 5/);
    expect(() => msgpack(b(0xc1))).toThrow(/msgpack byte 0xc1/);
    // {[1]: 2}: a map key that is an array
    expect(() => msgpack(b(0x81, 0x91, 0x01, 0x02))).toThrow(/map key that is not a string/);
  });

  it('GIVEN a map with a key twice THEN it throws (which value holds is a guess)', () => {
    expect(() => msgpack(b(0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02))).toThrow(/key "a" twice/);
  });

  it('GIVEN bytes cut short or left over THEN it throws', () => {
    expect(() => msgpack(b(0x92, 0x01))).toThrow(/ends early/);
    expect(() => msgpack(b())).toThrow(/ends early/);
    expect(() => msgpack(b(0xa3, 0x61))).toThrow(/ends early/);
    expect(() => msgpack(b(0xcd, 0x01))).toThrow(/ends early/);
    expect(() => msgpack(b(0x01, 0x02))).toThrow(/past its value/);
  });
});

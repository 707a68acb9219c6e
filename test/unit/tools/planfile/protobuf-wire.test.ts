/**
 * The protocol buffer wire format read against a message's shape (src/tools/planfile/protobuf-wire.ts):
 * an undeclared field, a declared field in another wire type, an unknown wire type and bytes
 * cut short all throw, naming the message and the field.
 */
import { describe, expect, it } from 'vitest';
import { fields, type MessageShape } from '../../../../src/tools/planfile/protobuf-wire.js';

const b = (...bytes: number[]) => Buffer.from(bytes);
const SHAPE: MessageShape = { name: 'Test', fields: { 1: 'varint', 2: 'bytes', 300: 'varint' } };
const read = (buf: Buffer) => [...fields(buf, SHAPE)].map((f) => (f.no === 2 ? [f.no, f.text()] : [f.no, f.int()]));

describe('fields of a message', () => {
  it('GIVEN declared fields THEN it reads varints (several bytes too), strings and a field number past 15', () => {
    // 1: 300 (0xac 0x02); 2: "hi"; 300: 1 (key 300*8 = 2400 = 0xe0 0x12)
    expect(read(b(0x08, 0xac, 0x02, 0x12, 0x02, 0x68, 0x69, 0xe0, 0x12, 0x01))).toEqual([[1, 300], [2, 'hi'], [300, 1]]);
  });

  it('GIVEN a field the shape does not declare THEN it throws naming it (a field of a newer format is a doubt, not something to skip)', () => {
    // field 17, varint
    expect(() => read(b(0x88, 0x01, 0x01))).toThrow('Test: unknown field 17 (wire type varint)');
  });

  it('GIVEN a declared field in another wire type THEN it throws', () => {
    // field 1 as bytes, field 2 as fixed32
    expect(() => read(b(0x0a, 0x00))).toThrow('Test: field 1 has wire type bytes, not varint');
    expect(() => read(b(0x15, 0, 0, 0, 0))).toThrow('Test: field 2 has wire type fixed32, not bytes');
  });

  it('GIVEN an unknown wire type (6, 7) or a group THEN it throws', () => {
    expect(() => read(b(0x0e))).toThrow('Test: field 1 has wire type 6 (unknown), not varint');
    expect(() => read(b(0x0b))).toThrow('Test: field 1 has wire type group start, not varint');
  });

  it('GIVEN bytes cut short THEN it throws: inside a varint, inside a length-delimited field', () => {
    expect(() => read(b(0x08, 0xac))).toThrow('Test: the bytes end inside a varint');
    expect(() => read(b(0x12, 0x05, 0x68))).toThrow('Test: field 2 runs past the end of the bytes');
    expect(() => read(b(0x12))).toThrow('Test: the bytes end inside a varint');
  });

  it('GIVEN a field read as what it is not THEN it throws', () => {
    const [f] = [...fields(b(0x08, 0x01), SHAPE)];
    expect(() => f!.bytes()).toThrow('Test: field 1 is not bytes');
  });
});

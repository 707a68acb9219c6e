/**
 * The protocol buffer wire format (https://protobuf.dev/programming-guides/encoding/), read
 * strictly against a message's shape: each field number the message declares and how it is
 * encoded. A field the shape does not declare, a declared field in another wire type, or bytes
 * cut short throw: the reader of a format it does not own (plan-changes.ts: OpenTofu's plan
 * file, documented as internal) must be unsure rather than skip what it does not know.
 */

/** How a declared field is encoded: a varint (integers, enums, bools) or length-delimited (strings, bytes, messages). */
export type WireType = 'varint' | 'bytes';

/** A message's fields by number (from its .proto), and its name for the errors. */
export interface MessageShape {
  readonly name: string;
  readonly fields: Readonly<Record<number, WireType>>;
}

export interface Field {
  readonly no: number;
  int(): number;
  bytes(): Buffer;
  text(): string;
}

const WIRE_TYPES: Record<number, string> = { 0: 'varint', 1: 'fixed64', 2: 'bytes', 3: 'group start', 4: 'group end', 5: 'fixed32' };

/** The fields of `buf`, a message of `shape`, in order. */
export function* fields(buf: Buffer, shape: MessageShape): Generator<Field> {
  let at = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (at >= buf.length) throw new Error(`${shape.name}: the bytes end inside a varint`);
      const b = buf[at++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
      if (mul > 2 ** 63) throw new Error(`${shape.name}: a varint longer than 64 bits`);
    }
  };
  while (at < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    const declared = shape.fields[no];
    if (declared === undefined) throw new Error(`${shape.name}: unknown field ${no} (wire type ${WIRE_TYPES[wire] ?? wire})`);
    const seen = wire === 0 ? 'varint' : wire === 2 ? 'bytes' : undefined;
    if (seen !== declared) throw new Error(`${shape.name}: field ${no} has wire type ${WIRE_TYPES[wire] ?? `${wire} (unknown)`}, not ${declared}`);
    if (wire === 0) {
      const v = varint();
      yield { no, int: () => v, bytes: () => wrong(shape, no, 'bytes'), text: () => wrong(shape, no, 'text') };
    } else {
      const len = varint();
      if (at + len > buf.length) throw new Error(`${shape.name}: field ${no} runs past the end of the bytes`);
      const b = buf.subarray(at, at + len);
      at += len;
      yield { no, int: () => wrong(shape, no, 'a number'), bytes: () => b, text: () => b.toString('utf8') };
    }
  }
}

function wrong(shape: MessageShape, no: number, what: string): never {
  throw new Error(`${shape.name}: field ${no} is not ${what}`);
}

/**
 * cty's msgpack (github.com/zclconf/go-cty cty/msgpack), read without a schema: objects and
 * maps are msgpack maps, lists, sets and tuples arrays, a dynamically typed value the pair
 * [its type as JSON (bin), the value], and a value known only after the apply an extension
 * (cty/msgpack/unknown.go: type 0, or 12 with refinements). Anything else (another extension,
 * a tag byte msgpack leaves unused, a map key that is no string, a key twice, bytes cut short
 * or left over) throws: the caller (plan-changes.ts) is then unsure of the plan and lets
 * `tofu show -json` read it.
 */

/** A value known only after the apply. */
export const UNKNOWN: unique symbol = Symbol('unknown');

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
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (let i = 0; i < n; i++) {
      const k = this.value();
      const key = typeof k === 'string' ? k : typeof k === 'number' ? String(k) : k instanceof Uint8Array ? Buffer.from(k).toString('utf8') : undefined;
      if (key === undefined) throw new Error('a msgpack map key that is not a string');
      if (Object.hasOwn(out, key)) throw new Error(`the msgpack map key ${JSON.stringify(key)} twice`);
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

/**
 * cty values (as cty-msgpack.ts decodes them) in the shapes `tofu show -json` writes them:
 * the value with unknowns left out, and `after_unknown`'s marks.
 */
import { UNKNOWN } from './cty-msgpack.js';

/** Unknown anywhere in the value. */
export function hasUnknown(v: unknown): boolean {
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
export function jsonLike(v: unknown): unknown {
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

/**
 * `after_unknown` of `tofu show -json`: true where the value is unknown, objects of the same
 * shape elsewhere, and for a list an array with a mark per element (false for a known leaf).
 */
export function unknownMarks(v: unknown): unknown {
  if (v === UNKNOWN) return true;
  if (isDynamic(v)) return unknownMarks(v[1]);
  if (Array.isArray(v)) return v.map((x) => unknownMarks(x) ?? false);
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

/** Canonical JSON text, for comparing and hashing API objects and graph blocks. */

/** JSON with the keys of every object sorted: the same object gives the same text (the no-op check's fingerprints too: noop/fingerprint.ts). */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}


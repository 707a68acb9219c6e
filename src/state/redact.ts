/**
 * What `deploy state show` prints instead of a secret. A state holds secrets in clear
 * (https://opentofu.org/docs/language/state/sensitive-data/): passwords, keys, tokens.
 */
export const REDACTED = '(sensitive value hidden)';

/**
 * Attribute names treated as secret even when the provider did not mark them sensitive
 * (a forgotten `Sensitive: true` must not leak through `show`).
 */
const SECRET_NAME = /pass(word|phrase)?$|passwd|secret|token|private|credential|bcrypt|api_?key|access_?key|_pem$|^key$/i;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type PathStep = { type?: string; value?: unknown };

/**
 * A copy of a state document with every secret value replaced by REDACTED: outputs marked
 * sensitive, the attribute paths each instance lists in `sensitive_attributes`, attributes
 * with secret-looking names, and the providers' opaque `private` data. Returns how many
 * values were hidden. Pure.
 */
export function redactState(doc: unknown): { doc: unknown; hidden: number } {
  let hidden = 0;
  const copy = structuredClone(doc) as { [k: string]: Json };
  if (!copy || typeof copy !== 'object') return { doc: copy, hidden };

  const outputs = copy.outputs;
  if (outputs && typeof outputs === 'object' && !Array.isArray(outputs)) {
    for (const out of Object.values(outputs)) {
      if (out && typeof out === 'object' && !Array.isArray(out) && out.sensitive === true && 'value' in out) {
        out.value = REDACTED;
        hidden += 1;
      }
    }
  }

  const resources = Array.isArray(copy.resources) ? copy.resources : [];
  for (const resource of resources) {
    const instances = resource && typeof resource === 'object' && !Array.isArray(resource) ? resource.instances : undefined;
    if (!Array.isArray(instances)) continue;
    for (const inst of instances) {
      if (!inst || typeof inst !== 'object' || Array.isArray(inst)) continue;
      if (typeof inst.private === 'string' && inst.private) {
        inst.private = REDACTED;
        hidden += 1;
      }
      const attrs = inst.attributes;
      if (!attrs || typeof attrs !== 'object' || Array.isArray(attrs)) continue;
      const paths = Array.isArray(inst.sensitive_attributes) ? inst.sensitive_attributes : [];
      for (const path of paths) {
        if (Array.isArray(path) && replaceAt(attrs, path as PathStep[])) hidden += 1;
      }
      hidden += redactByName(attrs);
    }
  }
  return { doc: copy, hidden };
}

/** Replaces the value at a cty path (`[{type: "get_attr", value: "result"}, ...]`). */
function replaceAt(root: Json, path: PathStep[]): boolean {
  if (path.length === 0) return false;
  let node: Json = root;
  for (let i = 0; i < path.length; i += 1) {
    const step = path[i]!;
    // an index step's value is cty JSON of dynamic type: {"value": ..., "type": ...}
    const raw = step.value && typeof step.value === 'object' && 'value' in (step.value as object) ? (step.value as { value: unknown }).value : step.value;
    const key = typeof raw === 'number' ? raw : String(raw);
    if (node === null || typeof node !== 'object') return false;
    const container = node as Record<string | number, Json>;
    if (!(key in container)) return false;
    if (i === path.length - 1) {
      if (container[key] === REDACTED) return false;
      container[key] = REDACTED;
      return true;
    }
    node = container[key]!;
  }
  return false;
}

function redactByName(node: Json): number {
  let n = 0;
  if (Array.isArray(node)) {
    for (const item of node) n += redactByName(item);
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (SECRET_NAME.test(k) && v !== null && v !== '' && v !== REDACTED && typeof v !== 'boolean') {
        node[k] = REDACTED;
        n += 1;
      } else {
        n += redactByName(v);
      }
    }
  }
  return n;
}

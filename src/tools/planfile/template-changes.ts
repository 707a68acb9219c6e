/**
 * What a plan changes in a Deployment's pod template: the leaves of `manifest.spec.template`
 * that differ between the plan's before and after, from either reader of a plan (the shown
 * plan, tofu-plan-json.ts, and the plan file, plan-changes.ts, which builds the same
 * `after_unknown` marks). Only numbers, booleans and null travel as values; a string (a probe's
 * script, a path) is named by its path alone.
 */
import type { TemplateChange, TemplateScalar } from '../../contract/graph/planned-change.js';
import { stableJson } from '../../contract/stable-json.js';

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const scalar = (v: Json): { value?: TemplateScalar } => (v === null || typeof v === 'number' || typeof v === 'boolean' ? { value: v } : {});
const templateOf = (v: Json): Json => {
  const manifest = isObject(v) ? v.manifest : undefined;
  const spec = isObject(manifest) ? manifest.spec : undefined;
  return isObject(spec) ? spec.template : undefined;
};

/**
 * The template's changed leaves, when both sides have a template (a Deployment updated in
 * place); `{}` otherwise. `afterUnknown`: tofu's `after_unknown` (true where the value is
 * known only after the apply; arrays of marks for lists).
 */
export function templateChangesOf(before: Json, after: Json, afterUnknown: Json): { templateChanges?: TemplateChange[] } {
  const b = templateOf(before);
  const a = templateOf(after);
  const u = templateOf(afterUnknown);
  if (!isObject(b) || (!isObject(a) && u !== true)) return {};
  const out: TemplateChange[] = [];
  walk(b, a, u, '', out);
  return { templateChanges: out };
}

/**
 * The attributes of a typed Kubernetes resource (a claim, a namespace: not kubernetes_manifest,
 * whose manifest the template changes cover) that an update changes to a known value, as
 * paths (`metadata[0].annotations.team`): names only, so the plan can say what changes
 * instead of guessing it from the resource's type. Values known only after the apply (computed
 * attributes) are left out.
 */
export function changedAttributesOf(type: string, actions: readonly string[], before: Json, after: Json, afterUnknown: Json): { changedAttributes?: string[] } {
  if (!type.startsWith('kubernetes_') || type === 'kubernetes_manifest' || actions.length !== 1 || actions[0] !== 'update') return {};
  const out: TemplateChange[] = [];
  walk(before, after, afterUnknown, '', out);
  return { changedAttributes: out.filter((c) => c.afterApply !== true).map((c) => c.path) };
}

/** A leaf that differs between two attribute values, in the paths changedAttributesOf writes, and which side lacks it. */
export interface LeafChange {
  readonly path: string;
  readonly absentBefore: boolean;
  readonly absentAfter: boolean;
}

/** Every leaf that differs between `before` and `after` (two attribute values of one resource, e.g. its state and its refresh). */
export function leafChanges(before: Json, after: Json): LeafChange[] {
  const out: TemplateChange[] = [];
  const absent = { before: new Set<string>(), after: new Set<string>() };
  walk(before, after, undefined, '', out, absent);
  return out.map((c) => ({ path: c.path, absentBefore: absent.before.has(c.path), absentAfter: absent.after.has(c.path) }));
}

function walk(b: Json, a: Json, u: Json, path: string, out: TemplateChange[], absent?: { readonly before: Set<string>; readonly after: Set<string> }): void {
  const before = scalar(b);
  if (u === true) {
    out.push({ path, ...(before.value !== undefined ? { before: before.value } : {}), afterApply: true });
    return;
  }
  if (isObject(b) && isObject(a)) {
    const marks = isObject(u) ? u : {};
    for (const k of [...new Set([...Object.keys(b), ...Object.keys(a), ...Object.keys(marks)])].sort()) walk(b[k], a[k], marks[k], path === '' ? k : `${path}.${k}`, out, absent);

    return;
  }
  if (Array.isArray(b) && Array.isArray(a)) {
    const marks = Array.isArray(u) ? u : [];
    for (let i = 0; i < Math.max(b.length, a.length, marks.length); i++) walk(b[i], a[i], marks[i], `${path}[${i}]`, out, absent);
    return;
  }
  if (stableJson(b ?? null) === stableJson(a ?? null)) return;
  const after = scalar(a);
  if (a === undefined && b !== undefined) absent?.after.add(path);
  if (b === undefined && a !== undefined) absent?.before.add(path);
  out.push({ path, ...(before.value !== undefined ? { before: before.value } : {}), ...(after.value !== undefined ? { after: after.value } : {}) });
}

/**
 * A saved plan as `tofu show -json <planfile>` prints it, read into what the runtime needs:
 * the resource changes (values left out: they may hold secrets) and the root outputs as
 * planned (callers must not log a sensitive one). Pure: JSON in, typed changes out.
 */
import { z } from 'zod';
import type { PlannedResourceChange } from '../../contract/graph/planned-change.js';
import { tofuResourceSchema, type TofuResource } from '../../contract/graph/tofu-state.js';
import { changedAttributesOf, templateChangesOf } from './template-changes.js';

/** A root output as planned: no `value` when it is known only after the apply. */
export interface PlannedOutput {
  readonly value?: unknown;
  readonly sensitive: boolean;
}

export interface ShownPlan {
  /** Every resource instance with an action other than no-op. */
  readonly changes: PlannedResourceChange[];
  readonly outputs: Record<string, PlannedOutput>;
}

const shownResourceSchema = z
  .object({
    address: z.string(),
    // a state holds resources and data sources only (the model's mode)
    mode: tofuResourceSchema.shape.mode,
    type: z.string(),
    name: z.string(),
    index: z.union([z.string(), z.number()]).optional(),
    values: z.record(z.string(), z.unknown()).optional(),
    tainted: z.boolean().optional(),
  })
  .loose();

interface ShownModule {
  readonly address?: string | undefined;
  readonly resources?: z.output<typeof shownResourceSchema>[] | undefined;
  readonly child_modules?: ShownModule[] | undefined;
}

/** A module of the shown state: its resources, and its child modules the same way. */
const shownModuleSchema: z.ZodType<ShownModule> = z.lazy(() =>
  z.object({ address: z.string().optional(), resources: z.array(shownResourceSchema).optional(), child_modules: z.array(shownModuleSchema).optional() }).loose(),
);

export const planJsonSchema = z
  .object({
    resource_changes: z
      .array(
        z
          .object({
            address: z.string(),
            mode: z.string(),
            type: z.string(),
            name: z.string(),
            change: z.object({ actions: z.array(z.string()), replace_paths: z.array(z.array(z.union([z.string(), z.number()]))).optional() }).loose(),
            action_reason: z.string().optional(),
          })
          .loose(),
      )
      .optional(),
    // the state before the plan: which instances are tainted (a rollout step that failed).
    // tofu's action_reason says "replace_because_tainted" only when nothing else replaces
    // the instance: a replace_triggered_by that also fires overwrites it with "replace_by_triggers"
    prior_state: z
      .object({ values: z.object({ root_module: shownModuleSchema.optional() }).loose().optional() })
      .loose()
      .optional(),
    planned_values: z
      .object({ outputs: z.record(z.string(), z.object({ value: z.unknown().optional(), sensitive: z.boolean() }).loose()).optional() })
      .loose()
      .optional(),
  })
  .loose();

/** The changes and planned outputs of a plan document that passed `planJsonSchema`. */
export function readShownPlan(plan: z.output<typeof planJsonSchema>): ShownPlan {
  const outputs = Object.fromEntries(
    Object.entries(plan.planned_values?.outputs ?? {}).map(([k, o]) => [k, { ...(o.value !== undefined ? { value: o.value } : {}), sensitive: o.sensitive }]),
  );
  const tainted = new Set((plan.prior_state?.values?.root_module?.resources ?? []).filter((r) => r.tainted === true).map((r) => r.address));
  const changes = (plan.resource_changes ?? [])
    .filter((c) => !(c.change.actions.length === 1 && c.change.actions[0] === 'no-op'))
    .map((c) => ({
      address: c.address,
      mode: c.mode,
      type: c.type,
      name: c.name,
      actions: c.change.actions,
      actionReason: c.action_reason,
      ...(tainted.has(c.address) ? { wasTainted: true } : {}),
      ...changedKeysOf(c.change.before, c.change.after, c.change.after_unknown),
      ...templateChangesOf(c.change.before, c.change.after, c.change.after_unknown),
      ...changedAttributesOf(c.type, c.change.actions, c.change.before, c.change.after, c.change.after_unknown),
      ...(c.change.replace_paths ? { replacePaths: c.change.replace_paths.map(formatAttributePath) } : {}),
    }));
  return { changes, outputs };
}

/**
 * The state the plan was made from (`prior_state`), in the shape of a state file's resources
 * (the model of src/contract/graph/tofu-state.ts: what the saved plan's `tfstate` gives when it is read in-process),
 * for a plan whose file could not be read that way (tofu.ts planGraph). A plan without a prior
 * state (the first) has no resources.
 */
export function readShownPriorState(plan: z.output<typeof planJsonSchema>): TofuResource[] {
  const out = new Map<string, TofuResource>();
  const visit = (m: ShownModule | undefined): void => {
    for (const r of m?.resources ?? []) {
      const key = JSON.stringify([m?.address ?? '', r.mode, r.type, r.name]);
      let resource = out.get(key);
      if (resource === undefined) {
        resource = { ...(m?.address ? { module: m.address } : {}), mode: r.mode, type: r.type, name: r.name, instances: [] };
        out.set(key, resource);
      }
      resource.instances.push({
        ...(r.index !== undefined ? { index_key: r.index } : {}),
        ...(r.tainted === true ? { status: 'tainted' } : {}),
        ...(r.values !== undefined ? { attributes: asStateAttributes(r.type, r.values) } : {}),
      });
    }
    for (const c of m?.child_modules ?? []) visit(c);
  };
  visit(plan.prior_state?.values?.root_module);
  return [...out.values()];
}

/**
 * The built-in terraform_data's attributes of type dynamic (internal/builtin/providers/tofu:
 * input, output, triggers_replace): a state file writes such a value as `{value, type}`
 * (cty's JSON of a dynamic value), `tofu show -json` as the value alone. Put back as the state
 * writes them (the type implied by the value, as cty reads JSON), so a caller reads one shape
 * whichever reader ran (moved-tags.ts reads the pushed digest's `output.value`). Other
 * providers' dynamic attributes (kubernetes_manifest's manifest and object) stay as shown:
 * without their schemas they cannot be told apart.
 */
const BUILTIN_DYNAMIC: Readonly<Record<string, readonly string[]>> = { terraform_data: ['input', 'output', 'triggers_replace'] };

function asStateAttributes(type: string, values: Record<string, unknown>): Record<string, unknown> {
  const dynamic = BUILTIN_DYNAMIC[type];
  if (dynamic === undefined) return values;
  const out = { ...values };
  for (const k of dynamic) if (out[k] !== undefined && out[k] !== null) out[k] = { value: out[k], type: impliedType(out[k]) };
  return out;
}

/** cty's type of a JSON value read without a type (ctyjson.ImpliedType): objects, tuples, strings, numbers, bools. */
function impliedType(v: unknown): unknown {
  if (v === null) return 'dynamic';
  if (Array.isArray(v)) return ['tuple', v.map(impliedType)];
  if (typeof v === 'object') return ['object', Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, impliedType(x)]))];
  return typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'bool';
}

/** `["spec", 0, "storage_class_name"]` -> `spec[0].storage_class_name` (tofu's own way of writing it). */
export function formatAttributePath(path: readonly (string | number)[]): string {
  return path.map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`)).join('');
}

/**
 * Names of the map entries of `triggers` or `data` that differ between before and after
 * (`afterUnknown`: `after_unknown` of the shown plan; plan-changes.ts builds the same).
 */
export function changedKeysOf(beforeValue: unknown, afterValue: unknown, afterUnknown: unknown): { changedKeys?: string[] } {
  const map = (v: unknown, attr: string): Record<string, unknown> | undefined => {
    const m = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[attr] : undefined;
    return m !== null && typeof m === 'object' ? (m as Record<string, unknown>) : undefined;
  };
  for (const attr of ['triggers', 'data']) {
    const before = map(beforeValue, attr);
    const after = map(afterValue, attr);
    const unknown = map(afterUnknown, attr);
    if (before === undefined || (after === undefined && unknown === undefined)) continue;
    const keys = new Set([...Object.keys(before), ...Object.keys(after ?? {}), ...Object.keys(unknown ?? {})]);
    const changed = [...keys].filter((k) => unknown?.[k] === true || JSON.stringify(before[k]) !== JSON.stringify(after?.[k])).sort();
    return { changedKeys: changed };
  }
  return {};
}

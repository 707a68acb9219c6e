/**
 * What an apply does to a node's pod, and why, from what tofu will do to its Deployment: a
 * changed pod template replaces the pod (Recreate: it stops, then the new one boots), and each
 * leaf of the template that changes is named as a cause; a rollout step run without a template
 * change only checks that the running pod is ready. Pure (issue 50: "the plan says what will
 * happen to each pod").
 *
 * The causes come from tofu's own planned template (contract/graph/planned-change.ts
 * `templateChanges`), so every field is named, whatever changed it: the fields deploy's
 * coordinates set in the operator's words (the stop timeout, the probe period), any other by its
 * path in the template.
 */
import type { TemplateChange, TemplateScalar } from '../../contract/graph/planned-change.js';
import { inSpec, undoes, type HandEdit } from '../drift/hand-edits.js';

/** A path of the template (as template-changes.ts writes it) that an operator knows by another name, and how its value reads. */
interface KnownField {
  readonly path: RegExp;
  readonly name: string;
  readonly seconds?: boolean;
  /** How a value known only after the apply reads. */
  readonly afterApply?: string;
  /** Said only when none of these paths is among the changes (a value derived from theirs). */
  readonly unlessAlso?: RegExp;
}

const CONTAINER = String.raw`spec\.containers\[\d+\]`;
const KNOWN: readonly KnownField[] = [
  { path: new RegExp(String.raw`^${CONTAINER}\.image$`), name: 'its image', afterApply: 'to the one this apply pushes' },
  { path: /^spec\.terminationGracePeriodSeconds$/, name: 'the stop timeout (--stop-timeout)', seconds: true },
  { path: new RegExp(String.raw`^${CONTAINER}\.readinessProbe\.periodSeconds$`), name: 'the probe period (--probe-period)', seconds: true },
  // liveness runs at a multiple of the probe period: said only when it changed on its own
  { path: new RegExp(String.raw`^${CONTAINER}\.livenessProbe\.periodSeconds$`), name: 'the liveness probe\'s period', seconds: true, unlessAlso: new RegExp(String.raw`^${CONTAINER}\.readinessProbe\.periodSeconds$`) },
  { path: new RegExp(String.raw`^${CONTAINER}\.startupProbe\.failureThreshold$`), name: 'the kubelet\'s bound on a boot (the startup probe, every 1s)', seconds: true },
  { path: /^spec\.runtimeClassName$/, name: 'its runtime class (--runtime-class)' },
];

/** 90 -> `90s`, 300 -> `5m`, 21600 -> `6h`. */
export function secondsText(s: number): string {
  if (s >= 3600 && s % 3600 === 0) return `${s / 3600}h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}

function valueText(v: TemplateScalar | undefined, seconds: boolean): string | undefined {
  if (v === undefined) return undefined;
  return seconds && typeof v === 'number' ? secondsText(v) : JSON.stringify(v);
}

/** One changed leaf in words: `the stop timeout (--stop-timeout) changes from 30s to 1m`. */
export function describeTemplateChange(c: TemplateChange, all: readonly TemplateChange[] = [c]): string | undefined {
  const known = KNOWN.find((k) => k.path.test(c.path));
  if (known?.unlessAlso !== undefined && all.some((o) => known.unlessAlso!.test(o.path))) return undefined;
  const name = known?.name ?? `the pod template's ${c.path}`;
  const from = valueText(c.before, known?.seconds === true);
  const to = valueText(c.after, known?.seconds === true);
  if (c.afterApply) return `${name} changes ${known?.afterApply ?? '(known after the apply)'}`;
  if (from !== undefined && to !== undefined) return `${name} changes from ${from} to ${to}`;
  if (from === undefined && to !== undefined) return `${name} is set to ${to}`;
  if (from !== undefined && to === undefined && c.after === undefined) return `${name} (${from}) is removed`;
  return `${name} changes`;
}

/** What the apply does to a node's pod. */
export type PodFate =
  /** the pod template changes: the pod stops and a new one boots; `causes` in words */
  | { readonly kind: 'replaced'; readonly causes: readonly string[] }
  /** the rollout step runs again with the same template: the running pod is only checked */
  | { readonly kind: 'kept' }
  /**
   * the template stays, but the ownership step writes other fields of the spec back (the
   * replicas, the strategy): the controller may start or stop pods, and the step waits for the
   * node's pod to be ready; `fields` those set back
   */
  | { readonly kind: 'waited'; readonly fields: readonly string[] }
  /** the plan does not say enough to tell (no template read from the plan) */
  | { readonly kind: 'unknown' };

/** The causes said at most, then "and N more". */
const MAX_CAUSES = 4;

/**
 * The fate of the pod of a node whose Deployment is updated (`templateChanges` from the plan)
 * or left as it is (`undefined` changes and `deploymentUpdated` false), with the node's hand edits
 * (an undone edit of the template replaces the pod too).
 */
export function podFateOf(deploymentUpdated: boolean, templateChanges: readonly TemplateChange[] | undefined, handEdits: readonly HandEdit[] = []): PodFate {
  const editsUndone = handEdits.filter((e) => e.kind === 'Deployment' && e.inTemplate && undoes(e));
  const causes: string[] = [];
  if (deploymentUpdated) {
    if (templateChanges === undefined) return { kind: 'unknown' };
    for (const c of templateChanges) {
      const words = describeTemplateChange(c, templateChanges);
      if (words !== undefined && !causes.includes(words)) causes.push(words);
    }
  }
  if (editsUndone.length > 0) causes.push(`${editsUndone.length === 1 ? 'a hand edit' : `${editsUndone.length} hand edits`} of its pod template ${editsUndone.length === 1 ? 'is' : 'are'} undone`);
  if (causes.length === 0) {
    const spec = [...new Set(handEdits.filter((e) => inSpec(e) && !e.inTemplate && undoes(e)).map((e) => e.field))];
    return spec.length > 0 ? { kind: 'waited', fields: spec } : { kind: 'kept' };
  }
  const shown = causes.length > MAX_CAUSES ? [...causes.slice(0, MAX_CAUSES - 1), `${causes.length - (MAX_CAUSES - 1)} more fields of its pod template change`] : causes;
  return { kind: 'replaced', causes: shown };
}

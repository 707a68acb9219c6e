/**
 * One resource instance a saved plan changes, as src/tools/ reads it from
 * `tofu show -json <planfile>` and src/workflow/ describes it (values left out: they may be
 * secret).
 */
export interface PlannedResourceChange {
  readonly address: string;
  readonly mode: 'managed' | 'data' | string;
  readonly type: string;
  readonly name: string;
  /** e.g. ['create'], ['update'], ['delete', 'create'] (replace), ['read'], ['no-op']. */
  readonly actions: readonly string[];
  /** Why tofu chose the action, e.g. 'replace_because_tainted', 'replace_by_triggers'. */
  readonly actionReason: string | undefined;
  /**
   * The state held the instance as tainted (e.g. a rollout step that failed). Read from the
   * plan's prior state: `actionReason` says 'replace_by_triggers' instead when a
   * replace_triggered_by fires too.
   */
  readonly wasTainted?: boolean;
  /**
   * The keys of `triggers` (null_resource) or `data` (ConfigMap) whose value changes, sorted;
   * names only, so the summary can say why (e.g. the spire node's machine ID) without values.
   */
  readonly changedKeys?: readonly string[];
  /**
   * The attributes that force a replacement (`replace_paths` of the plan JSON), each written as
   * an attribute path, e.g. `spec[0].storage_class_name`. Names only, never values.
   */
  readonly replacePaths?: readonly string[];
  /**
   * A Deployment's pod template as the plan changes it (`manifest.spec.template`, before and
   * after): each leaf that differs, what the pod's fate follows from (workflow/summary/pod-fate.ts).
   * Present, maybe empty, only when both sides have a template.
   */
  readonly templateChanges?: readonly TemplateChange[];
  /**
   * A typed Kubernetes resource's attributes that an update changes to a known value, as paths
   * (`metadata[0].annotations.team`); names only (tools/planfile/template-changes.ts).
   */
  readonly changedAttributes?: readonly string[];
}

/** A number, a boolean or null: the only values a template change carries (strings may be long scripts; none are shown). */
export type TemplateScalar = number | boolean | null;

/** One leaf of a pod template that the plan changes. */
export interface TemplateChange {
  /** Its path in the template, as people write it: `spec.containers[0].startupProbe.failureThreshold`. */
  readonly path: string;
  /** The value before and after, when it is a TemplateScalar on that side (absent when the leaf is absent or another kind). */
  readonly before?: TemplateScalar;
  readonly after?: TemplateScalar;
  /** The new value is known only after the apply (the image's digest, read after the push). */
  readonly afterApply?: true;
}

/** What the plan's summary and the claim guard read of a planned change (src/tools/ gives more). */
export type PlannedChange = Pick<PlannedResourceChange, 'address' | 'name' | 'actions' | 'actionReason' | 'wasTainted' | 'changedKeys' | 'replacePaths' | 'templateChanges' | 'changedAttributes'>;

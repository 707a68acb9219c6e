/**
 * The state model of a run's view: events in (the plan's per-node words, tofu's events, the
 * steps' output lines, the group's rollback after tofu), one row per node and one per target out, and the sentence each change
 * of state is said in. Pure: no clock (each event carries its time), no stream, no colour;
 * tty-view.ts draws the rows in place, plain-view.ts prints the sentences.
 *
 * A resource is named through src/contract/graph/graph-ids.ts (graphPartOf), the one mapping from a
 * graph address to (node, part); no construct ID ever reaches a row or a sentence.
 */
import { graphPartOf, NODE_PART_WORDS, TARGET_PART_WORDS } from '../../contract/graph/graph-ids.js';
import { parseStepLine, stepLineWords } from '../../contract/step-lines.js';
import { parseLogLine } from '../../log.js';
import { parseStepProgressLine, type StepProgress } from '../../rollout/progress.js';
import type { ChangeAction, TofuEvent } from '../../tools/tofu/tofu-events.js';
import type { Verdict } from '../../rollout/classify/verdict.js';

/** Where a row is: on its way (`active`), done well, done badly, or not touched by this run. */
export type RowStatus = 'planned' | 'active' | 'ok' | 'bad' | 'unchanged';

export interface Row {
  readonly target: string;
  /** The node, or undefined for the target's row (namespace, NetworkPolicy, SPIRE). */
  readonly node: string | undefined;
  /** What people call it: the node's name, or `namespace <ns>`. */
  readonly label: string;
  readonly status: RowStatus;
  /** The state in a few words: `pushing the image`, `waiting for the pod: booting`, `ready`. */
  readonly words: string;
  /** More about it, shown after the words when there is room (the step's detail). */
  readonly detail: string;
  /** When the current state began (the event's time, ms), for the elapsed time. */
  readonly since: number;
  /** When the row first became active, for the node's total time. */
  readonly startedAt: number | undefined;
  /** When it ended (ready, rolled back, failed), for a still total. */
  readonly endedAt: number | undefined;
  /** The last line a step of this row printed (a build's or a push's output). */
  readonly output: string;
}

/** What a target plans, before tofu applies it. */
export interface PlannedTarget {
  readonly target: string;
  readonly namespace: string;
  /** Whether the target's own resources change (namespace, NetworkPolicy, SPIRE). */
  readonly changes: boolean;
  readonly nodes: readonly {
    readonly node: string;
    readonly words: string;
    readonly changes: boolean;
    /** What its push moves, when known: `57.3 MB archive`, with `, one upload for 3 nodes` when other nodes of the run push the same archive and tag. */
    readonly push?: string | undefined;
    /** What its Deployment waits for, when it waits (`db (after)`, `wave 1 of 3`): order-rules.ts. */
    readonly waits?: string | undefined;
  }[];
}

/**
 * A node of the group's rollback (--on-failure group: src/workflow/target/group-rollback.ts),
 * after tofu ended: on its way back to its previous image `to` (short), with the last verdict
 * of the wait for its pod once one came; back; left as it is (`why`); or stopped by an
 * interrupt (`why` says what it runs).
 */
export type SetBackStep =
  | { readonly kind: 'setting-back'; readonly to: string; readonly verdict?: Verdict }
  | { readonly kind: 'set-back'; readonly to: string }
  | { readonly kind: 'not-set-back'; readonly why: string }
  | { readonly kind: 'interrupted'; readonly why: string };

export type ViewEvent =
  | { readonly kind: 'planned'; readonly at: number; readonly plan: PlannedTarget }
  | { readonly kind: 'tofu'; readonly at: number; readonly target: string; readonly event: TofuEvent }
  /** tofu's apply of the target ended, well (`ok`) or not. */
  | { readonly kind: 'ended'; readonly at: number; readonly target: string; readonly ok: boolean }
  /** A node of the group's rollback, which runs after tofu ended. */
  | { readonly kind: 'set-back'; readonly at: number; readonly target: string; readonly node: string; readonly step: SetBackStep };

/** What one event did: the rows it changed and the sentences for a plain log. */
export interface Said {
  readonly row: Row;
  readonly line: string;
}

const DONE_WORDS: Record<string, string> = { create: 'created', update: 'updated', replace: 'replaced', delete: 'deleted', read: 'read' };
const DOING_WORDS: Record<string, string> = { create: 'creating', update: 'updating', replace: 'replacing', delete: 'deleting', read: 'reading' };

function done(action: ChangeAction): string {
  return DONE_WORDS[action] ?? `${action} done`;
}
function doing(action: ChangeAction): string {
  return DOING_WORDS[action] ?? action;
}

/** `systemd-degraded` -> `systemd degraded`. */
function reasonWords(reason: string): string {
  return reason.replaceAll('-', ' ');
}

/** `1m05s`, `12s`. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** How tofu's local-exec starts its output: the command it runs (internal/builtin/provisioners/local-exec). */
const LOCAL_EXEC_ECHO = 'Executing: [';

const FINAL: ReadonlySet<RowStatus> = new Set(['ok', 'bad']);

export interface RunRows {
  /** Takes one event; returns what changed, in order. */
  apply(e: ViewEvent): Said[];
  /** Every row: per target its own row first, then its nodes in plan order. */
  rows(): readonly Row[];
}

export function createRunRows(): RunRows {
  const rows = new Map<string, Row>();
  const key = (target: string, node: string | undefined) => `${target}\n${node ?? ''}`;
  const namespaces = new Map<string, string>();
  const pushes = new Map<string, string>();
  const waits = new Map<string, string>();

  function targetRow(target: string, at: number): Row {
    const k = key(target, undefined);
    let r = rows.get(k);
    if (!r) rows.set(k, (r = blank(target, undefined, `namespace ${namespaces.get(target) ?? target}`, at)));
    return r;
  }
  function nodeRow(target: string, node: string, at: number): Row {
    const k = key(target, node);
    let r = rows.get(k);
    if (!r) {
      targetRow(target, at);
      rows.set(k, (r = blank(target, node, node, at)));
    }
    return r;
  }
  /** Sets the row's state; a sentence when the words changed (the detail alone says nothing). */
  function set(row: Row, change: Partial<Row>, at: number, sentence?: string, how: { asIs?: boolean } = {}): Said[] {
    const status = change.status ?? row.status;
    const wordsChanged = change.words !== undefined && change.words !== row.words;
    const next: Row = {
      ...row,
      ...change,
      since: wordsChanged || status !== row.status ? at : row.since,
      startedAt: row.startedAt ?? (status === 'active' ? at : undefined),
      endedAt: FINAL.has(status) ? (row.endedAt ?? at) : undefined,
    };
    rows.set(key(row.target, row.node), next);
    if (!wordsChanged && sentence === undefined) return [];
    return [{ row: next, line: how.asIs === true && sentence !== undefined ? sentence : `${row.label}: ${sentence ?? next.words}` }];
  }

  function onPlanned(p: PlannedTarget, at: number): Said[] {
    namespaces.set(p.target, p.namespace);
    const t = targetRow(p.target, at);
    // the plan's order (by name), whatever came before
    for (const n of p.nodes) rows.delete(key(p.target, n.node));
    rows.set(key(p.target, undefined), { ...t, label: `namespace ${p.namespace}`, status: p.changes ? 'planned' : 'unchanged', words: p.changes ? 'planned' : 'no change' });
    for (const n of p.nodes) {
      if (n.push !== undefined) pushes.set(key(p.target, n.node), n.push);
      if (n.waits !== undefined && n.changes) waits.set(key(p.target, n.node), n.waits);
      const r = nodeRow(p.target, n.node, at);
      const words = n.changes ? (n.waits !== undefined ? `planned: waits for ${n.waits}` : 'planned') : 'no change';
      rows.set(key(p.target, n.node), { ...r, status: n.changes ? 'planned' : 'unchanged', words, detail: n.changes ? n.words : '' });
    }
    return [];
  }

  function onStepLine(target: string, node: string | undefined, part: string, line: string, at: number): Said[] {
    const text = line.trimEnd();
    // tofu's own first line of every local-exec (`Executing: ["/bin/sh" "-c" ...]`) is not the step's
    if (text === '' || text.startsWith(LOCAL_EXEC_ECHO)) return [];
    const row = node === undefined ? targetRow(target, at) : nodeRow(target, node, at);
    const progress = node === undefined ? undefined : parseStepProgressLine(text);
    if (progress) return onStepProgress(row, progress, at);
    // a step's own output (a build's, a push's; a log line of the rollout step in its words):
    // the last line stays on the row
    const logged = parseLogLine(text);
    if (logged !== undefined) {
      const words = logged.level === 'info' ? logged.msg : `${logged.level}: ${logged.msg}`;
      return set(row, { output: words }, at, `${part}: ${words}`);
    }
    // a typed line of a step (src/contract/step-lines.ts): the push's about its own node (a
    // build's line, a failure) is said in its words, which name the node; the row shows it
    // without the name
    const step = parseStepLine(text);
    if (step === undefined) return set(row, { output: text }, at, `${part}: ${text}`);
    if (step.deployStep !== 'push' || step.node !== node) return set(row, { output: stepLineWords(step) }, at, `${part}: ${stepLineWords(step)}`);
    return set(row, { output: step.event === 'build' ? `build: ${step.message}` : step.message }, at, stepLineWords(step), { asIs: true });
  }

  function onStepProgress(stepRow: Row, p: StepProgress, at: number): Said[] {
    // the step's progress is newer than any line it printed before
    const row: Row = { ...stepRow, output: '' };
    if (p.event === 'outcome') {
      const units = p.failedUnits.length > 0 ? ` (${p.failedUnits.join(', ')})` : '';
      switch (p.outcome) {
        case 'ready':
          return set(row, { status: 'ok', words: 'ready', detail: '' }, at, `ready in ${formatElapsed(p.totalMs)}`);
        case 'rolled-back':
          return set(row, { status: 'bad', words: `rolled back: ${reasonWords(p.reason)}${units}`, detail: p.message }, at);
        case 'failed-no-previous':
          return set(row, { status: 'bad', words: `failed: ${reasonWords(p.reason)}${units}; nothing to roll back to`, detail: p.message }, at);
        case 'rollback-failed':
          return set(row, { status: 'bad', words: `failed: ${reasonWords(p.reason)}${units}; the rollback failed too`, detail: p.message }, at);
        case 'interrupted':
          return set(row, { status: 'bad', words: 'interrupted: nothing rolled back', detail: p.message }, at);
      }
    }
    // the soak (rollout/soak.ts): the pod is Ready, the row counts down what it must still hold
    if (p.stage === 'soak') return set(row, { status: 'active', words: `soaking: ${formatElapsed(p.remainingMs ?? p.limitMs - p.elapsedMs)} left`, detail: p.detail }, at);
    const stage = p.stage === 'rollback' ? 'rolling back' : 'waiting for the pod';
    const systemd = p.systemd ? ` (systemd ${p.systemd})` : '';
    const words =
      p.verdict === 'waiting' ? `${stage}: ${p.phase}${systemd}` : p.verdict === 'failed' ? `${stage}: failed: ${reasonWords(p.phase)}${systemd}` : `${stage}: pod ready`;
    return set(row, { status: 'active', words, detail: p.detail }, at);
  }

  function onTofu(target: string, e: TofuEvent, at: number): Said[] {
    // rows are the apply's: init's and plan's events (the digests read at plan time) say nothing
    if (!namespaces.has(target)) return [];
    if (e.kind === 'provision') {
      if (e.phase !== 'output' || e.output === undefined) return [];
      const g = graphPartOf(e.address);
      if (!g) return [];
      const part = g.scope === 'node' ? NODE_PART_WORDS[g.part] : TARGET_PART_WORDS[g.part];
      return e.output.split('\n').flatMap((line) => onStepLine(target, g.scope === 'node' ? g.node : undefined, part, line, at));
    }
    if (e.kind !== 'apply-start' && e.kind !== 'apply-complete' && e.kind !== 'apply-errored') return [];
    const g = graphPartOf(e.address);
    if (!g) return [];
    if (g.scope === 'target') {
      const row = targetRow(target, at);
      const what = TARGET_PART_WORDS[g.part];
      // the RuntimeClass is only read; its absence is an error of its own (a diagnostic)
      if (g.part === 'runtime-class') return [];
      if (e.kind === 'apply-start') return set(row, { status: 'active', words: `${doing(e.action)} ${what}` }, at);
      if (e.kind === 'apply-errored') return set(row, { status: 'bad', words: `${what} ${e.action} failed` }, at);
      return set(row, { status: 'ok', words: `${what} ${done(e.action)}` }, at);
    }
    const row = nodeRow(target, g.node, at);
    const what = NODE_PART_WORDS[g.part];
    // a row that ended (ready, rolled back) keeps its words: a later deletion is the old step's
    if (FINAL.has(row.status) && e.kind !== 'apply-errored') return [];
    switch (g.part) {
      // the digests are read and recorded on the way: the push and the rollout say the node's state
      case 'digest':
      case 'pushed-digest':
        return [];
      case 'push':
        if (e.action === 'delete') return [];
        if (e.kind === 'apply-start') return set(row, { status: 'active', words: 'pushing the image', detail: pushes.get(key(target, g.node)) ?? '', output: '' }, at);
        if (e.kind === 'apply-errored') return set(row, { status: 'bad', words: 'the image push failed' }, at);
        {
          // pushed at once, whatever the order; its Deployment then waits (after, the waves)
          const w = waits.get(key(target, g.node));
          return set(row, { status: 'active', words: w === undefined ? 'image pushed' : `image pushed; waits for ${w}` }, at, `image pushed in ${formatElapsed(e.elapsedSeconds * 1000)}`);
        }
      case 'rollout':
        // replaced: the old step's record goes first; only the new step says anything
        if (e.action === 'delete') return [];
        if (e.kind === 'apply-start') return set(row, { status: 'active', words: 'waiting for the pod', detail: '', output: '' }, at);
        // the step's outcome line said it; without one (the step could not start) tofu's error says why
        if (e.kind === 'apply-errored') return row.status === 'bad' ? [] : set(row, { status: 'bad', words: 'the rollout step failed' }, at);
        return row.status === 'ok' ? [] : set(row, { status: 'ok', words: 'ready' }, at);
      default: {
        if (e.kind === 'apply-start') return set(row, { status: 'active', words: `${doing(e.action)} ${what}` }, at);
        if (e.kind === 'apply-errored') return set(row, { status: 'bad', words: `${what} ${e.action} failed` }, at);
        // the node has no rollout step to wait for when its pod does not change (a claim grown)
        return set(row, { status: 'active', words: `${what} ${done(e.action)}` }, at);
      }
    }
  }

  /**
   * The group's rollback: the node's row (ended, ready) is on its way again, back to its previous
   * image, with the time of the way back alone; then back (ok), or not (bad: the node is not where
   * the group's rollback wanted it), with why.
   */
  function onSetBack(target: string, node: string, step: SetBackStep, at: number): Said[] {
    const row = nodeRow(target, node, at);
    switch (step.kind) {
      case 'setting-back': {
        const head = `setting back to ${step.to}: `;
        const v = step.verdict;
        if (v === undefined) {
          // a new way: its time counts from here, not from the rollout before it
          const fresh: Row = { ...row, status: 'planned', startedAt: undefined, endedAt: undefined, output: '' };
          return set(fresh, { status: 'active', words: `${head}waiting for Ready`, detail: '' }, at);
        }
        const systemd = v.kind !== 'ready' && v.systemdState ? ` (systemd ${v.systemdState})` : '';
        if (v.kind === 'ready') return set(row, { status: 'active', words: `${head}pod ready`, detail: '' }, at);
        if (v.kind === 'failed') return set(row, { status: 'active', words: `${head}failed: ${reasonWords(v.reason)}${systemd}`, detail: v.message.split('\n')[0]! }, at);
        return set(row, { status: 'active', words: `${head}waiting for Ready: ${v.phase}${systemd}`, detail: v.detail }, at);
      }
      case 'set-back':
        return set(row, { status: 'ok', words: `set back to ${step.to}`, detail: '' }, at, `set back to ${step.to} in ${formatElapsed(at - (row.startedAt ?? at))}`);
      case 'not-set-back':
        return set(row, { status: 'bad', words: 'could not be set back', detail: step.why }, at, `could not be set back: ${step.why}`);
      case 'interrupted':
        return set(row, { status: 'bad', words: 'interrupted', detail: step.why }, at, `interrupted: ${step.why}`);
    }
  }

  /** A row still on its way when tofu ended: done (a claim grown or a node destroyed: no pod to wait for), or stopped. */
  function onEnded(target: string, ok: boolean, at: number): Said[] {
    return [...rows.values()]
      .filter((r) => r.target === target && (r.status === 'active' || (!ok && r.status === 'planned')))
      .flatMap((r) => (ok ? set(r, { status: 'ok', words: 'done' }, at) : set(r, { status: 'bad', words: r.status === 'planned' ? 'not applied' : `stopped while ${r.words}` }, at)));
  }

  return {
    apply(e) {
      if (e.kind === 'planned') return onPlanned(e.plan, e.at);
      if (e.kind === 'tofu') return onTofu(e.target, e.event, e.at);
      if (e.kind === 'set-back') return onSetBack(e.target, e.node, e.step, e.at);
      return onEnded(e.target, e.ok, e.at);
    },
    rows() {
      return [...rows.values()];
    },
  };
}

function blank(target: string, node: string | undefined, label: string, at: number): Row {
  return { target, node, label, status: 'planned', words: 'planned', detail: '', since: at, startedAt: undefined, endedAt: undefined, output: '' };
}

/**
 * --on-failure group: after an apply that failed because a node's rollout failed, every other
 * node this run changed (its rollout step exited 0: its report says so, with the image it set
 * and the one before) is set back to its previous image as well, so that the group runs one
 * configuration again. Waves in reverse order (the last changed first), the nodes of a wave
 * together and each waited for until Ready before the wave before it goes: never more nodes
 * down at once than on the way forward. Each node's rollback is the rollout step's own
 * (src/rollout/set-back.ts); this module only orders them and gives the verdict.
 *
 * An interrupt (the run's signal) stops the waits, never a write (set-back.ts: each node's
 * set-back is one patch, let finish): the waves not begun are not touched, and each node says
 * what its Deployment holds now (`runs`: its previous image, this run's, or null when unknown).
 * The run's view shows each node on its way back (its row, run-rows.ts).
 *
 * The exit code: 4 when every node is back, 6 when one could not be set back (or was changed
 * by someone since its rollout, so the group is not one configuration), 5 when one was new in
 * this run (nothing to go back to), 130 when interrupted; the failed node's own code counts too.
 */
import { waves } from '../../config/order-rules.js';
import type { TargetModel } from '../../config/target-model.js';
import type { RunKubeconfig } from '../../kube/kubeconfig.js';
import type { Logger } from '../../log.js';
import { ExitCode } from '../../errors.js';
import { shortImage } from '../../rollout/report-format.js';
import { rolloutsExitCode, type RolloutOutcome, type RolloutReport } from '../../rollout/report.js';
import type { Verdict } from '../../rollout/classify/verdict.js';
import type { RunRollout, SetBackResult } from '../../rollout/set-back.js';
import type { RunView } from '../view/run-view.js';
import type { SetBackStep } from '../view/run-rows.js';

/** One node of the group's rollback, and what it runs now. */
export interface GroupSetBack {
  readonly namespace: string;
  readonly node: string;
  /** Its wave (1-based) among the target's. */
  readonly wave: number;
  /**
   * `set-back`: Ready on its previous image; `failed`: not back (its rollback did not become
   * Ready, or could not be written: `runs` says which);
   * `changed`: not touched, someone changed its Deployment since; `no-previous`: new in this
   * run, nothing to go back to; `interrupted`: stopped while it was set back (`runs`: its
   * previous image when the write was done, its pod not Ready yet; this run's when no write was
   * sent; null when unknown); `not-reached`: the interrupt came before its wave, it runs this
   * run's image.
   */
  readonly outcome: 'set-back' | 'failed' | 'changed' | 'no-previous' | 'interrupted' | 'not-reached';
  /** The image its Deployment holds now, as far as deploy knows (null: it does not). */
  readonly runs: string | null;
  readonly detail: string;
}

export interface GroupRollback {
  readonly nodes: readonly GroupSetBack[];
  readonly exitCode: ExitCode;
}

export interface GroupRollbackDeps {
  /** Sets one node back and waits for it (setBackNode with the run's API and timeouts); `onVerdict`: each verdict of the wait for its pod. */
  readonly setBack: (rollout: RunRollout, onVerdict: (v: Verdict) => void) => Promise<SetBackResult>;
  readonly signal: AbortSignal;
  readonly progress: (line: string) => void;
  /** Each node on its way back, for its row of the run's view (RunView.setBack of the target). */
  readonly shown: (node: string, step: SetBackStep) => void;
}

/** The failures that make a group go back (an interrupt is the operator's stop, not a failure). */
const FAILED: ReadonlySet<RolloutOutcome> = new Set(['rolled-back', 'failed-no-previous', 'rollback-failed']);

/** Whether the rollouts of this run call for the group's rollback under `model`'s --on-failure. */
export function wantsGroupRollback(model: Pick<TargetModel, 'onFailure'>, rollouts: readonly RolloutReport[]): boolean {
  return model.onFailure === 'group' && rollouts.some((r) => FAILED.has(r.outcome));
}

/** The target as the waves need it: its nodes (with their `after`), its wave size, its namespace. */
type GroupTarget = Pick<TargetModel, 'waveSize' | 'namespace'> & { readonly nodes: readonly Pick<TargetModel['nodes'][number], 'name' | 'after'>[] };

export async function rollBackGroup(model: GroupTarget, rollouts: readonly RolloutReport[], deps: GroupRollbackDeps): Promise<GroupRollback> {
  const succeeded = new Map(rollouts.filter((r) => r.outcome === 'ready' && r.namespace === model.namespace).map((r) => [r.node, r]));
  const all = waves(model.nodes, model.waveSize);
  const done: GroupSetBack[] = [];
  for (let w = all.length; w >= 1; w--) {
    const mine = all[w - 1]!.flatMap((n) => (succeeded.has(n.name) ? [succeeded.get(n.name)!] : []));
    if (mine.length === 0) continue;
    if (deps.signal.aborted) {
      for (const r of mine) {
        done.push(entry(r, w, 'not-reached', r.image, 'not set back: interrupted before its wave; it runs the image of this run'));
        deps.shown(r.node, { kind: 'interrupted', why: `not set back (the interrupt came before its wave): it runs ${shortImage(r.image)}` });
      }
      continue;
    }
    deps.progress(`--on-failure group: setting back wave ${w} of ${all.length}: ${mine.map((r) => r.node).join(', ')}`);
    done.push(...(await Promise.all(mine.map((r) => setBackOne(r, w, deps)))));
  }
  return { nodes: done, exitCode: exitCodeOf(rollouts, done) };
}

async function setBackOne(r: RolloutReport, wave: number, deps: GroupRollbackDeps): Promise<GroupSetBack> {
  const show = (step: SetBackStep) => deps.shown(r.node, step);
  if (r.previousImage === null) {
    show({ kind: 'not-set-back', why: 'its first deploy was in this run: there is no previous image' });
    return entry(r, wave, 'no-previous', r.image, 'not set back: its first deploy was in this run, there is no previous image');
  }
  const previous = r.previousImage;
  const to = shortImage(previous);
  show({ kind: 'setting-back', to });
  const res = await deps.setBack({ namespace: r.namespace, node: r.node, image: r.image, previousImage: previous }, (verdict) => show({ kind: 'setting-back', to, verdict }));
  const runs = res.holds === 'previous' ? previous : res.holds === 'this-run' ? r.image : null;
  const holds = runs === null ? 'what it runs is not known' : `it runs ${shortImage(runs)}`;
  switch (res.outcome) {
    case 'rolled-back':
      show({ kind: 'set-back', to });
      return entry(r, wave, 'set-back', previous, `set back to ${to}: ${res.detail}`);
    case 'rollback-failed':
      show({ kind: 'not-set-back', why: `${res.detail.split('\n')[0]} (${holds})` });
      return entry(r, wave, 'failed', runs, `the rollback to ${to} failed: ${res.detail}`);
    case 'interrupted':
      show({ kind: 'interrupted', why: res.holds === 'previous' ? `set back to ${to}, its pod not Ready yet` : `${holds}, not set back` });
      return entry(r, wave, 'interrupted', runs, `interrupted: ${res.detail}`);
    case 'changed':
      show({ kind: 'not-set-back', why: res.detail });
      return entry(r, wave, 'changed', null, `not set back: ${res.detail}`);
  }
}

function entry(r: RolloutReport, wave: number, outcome: GroupSetBack['outcome'], runs: string | null, detail: string): GroupSetBack {
  return { namespace: r.namespace, node: r.node, wave, outcome, runs, detail };
}

/** As the rollout steps' codes: each node's result as the outcome of a rollout, the worst wins; an interrupt is 130 unless a node is left down. */
function exitCodeOf(rollouts: readonly RolloutReport[], nodes: readonly GroupSetBack[]): ExitCode {
  const as: Record<GroupSetBack['outcome'], RolloutOutcome> = {
    'set-back': 'rolled-back',
    failed: 'rollback-failed',
    changed: 'rollback-failed',
    'no-previous': 'failed-no-previous',
    interrupted: 'interrupted',
    'not-reached': 'interrupted',
  };
  const code = rolloutsExitCode([...rollouts.filter((r) => r.outcome !== 'ready'), ...nodes.map((n) => ({ outcome: as[n.outcome] }))]);
  const stopped = nodes.some((n) => n.outcome === 'interrupted' || n.outcome === 'not-reached');
  return stopped && code !== ExitCode.rollbackFailed ? ExitCode.interrupted : code;
}

/** The summary's line for a node of the group's rollback. */
export function groupSetBackLine(n: GroupSetBack): string {
  const where = `${n.namespace}/${n.node}`;
  const runs = n.runs === null ? '' : ` (runs ${shortImage(n.runs)})`;
  return `${where}: group rollback (wave ${n.wave}): ${n.outcome}${runs}: ${n.detail}`;
}

/** What the group's rollback takes of the run. */
export interface GroupRollbackRun {
  readonly env: NodeJS.ProcessEnv;
  /** The run's kubeconfig, resolved once. */
  readonly kube: RunKubeconfig;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly progress: (line: string) => void;
  readonly view: Pick<RunView, 'setBack'>;
}

/**
 * rollBackGroup against the cluster: the run's kubeconfig, each node given the rollout timeout
 * to come back (as the step gives its own rollback).
 */
export async function rollBackGroupInCluster(model: TargetModel, rollouts: readonly RolloutReport[], run: GroupRollbackRun): Promise<GroupRollback> {
  const [{ openRolloutApi }, { setBackNode }, { requireKubeAccess }] = await Promise.all([import('../../kube/rollout-api.js'), import('../../rollout/set-back.js'), import('../../kube/kubeconfig.js')]);
  const api = await openRolloutApi(requireKubeAccess(run.kube));
  const limits = { timeout: model.rolloutTimeout, rollbackTimeout: model.rolloutTimeout };
  return rollBackGroup(model, rollouts, {
    setBack: (r, onVerdict) => setBackNode(api, r, limits, { api, signal: run.signal, logger: run.logger, progress: { show: (_stage, v) => onVerdict(v), end: () => {} } }),
    signal: run.signal,
    progress: (line) => run.progress(`[${model.target}] ${line}`),
    shown: (node, step) => run.view.setBack(model.target, node, step),
  });
}

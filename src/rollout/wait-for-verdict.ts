/**
 * Waits until the classifier gives a verdict (ready or failed), the deadline passes (a
 * `timeout` failure that says what it was still waiting for), or the signal aborts.
 * Re-classifies on every watch change and every half second (grace periods, the deadline).
 */
import { classifyRollout, type Verdict } from './classify/classify.js';
import type { RolloutWatch } from './rollout-watch.js';
import type { RolloutSnapshot } from './snapshot.js';

export type WaitResult =
  | { readonly kind: 'verdict'; readonly verdict: Extract<Verdict, { kind: 'ready' | 'failed' }>; readonly snapshot: RolloutSnapshot; readonly at: number }
  | { readonly kind: 'interrupted'; readonly last: Verdict | undefined; readonly snapshot: RolloutSnapshot; readonly at: number };

export interface WaitOptions {
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  readonly signal: AbortSignal;
  readonly minGeneration?: number;
  /** The rollback's wait: judge the pod, not the Deployment's progress deadline (see ClassifyContext). */
  readonly ignoreProgressDeadline?: boolean;
  readonly claimGraceMs?: number;
  /** Every classification, for the progress line. */
  readonly onVerdict?: (v: Verdict) => void;
  readonly now?: () => number;
}

const TICK_MS = 500;

export function waitForVerdict(watch: RolloutWatch, opts: WaitOptions): Promise<WaitResult> {
  const now = opts.now ?? Date.now;
  const watchStartedAt = now();
  let last: Verdict | undefined;
  return evaluateUntil<WaitResult>(watch, opts.signal, () => {
    const snapshot = watch.snapshot();
    const t = now();
    if (opts.signal.aborted) return { kind: 'interrupted', last, snapshot, at: t };
    const v = classifyRollout(snapshot, {
      now: t,
      watchStartedAt,
      ...(opts.minGeneration !== undefined ? { minGeneration: opts.minGeneration } : {}),
      ...(opts.ignoreProgressDeadline ? { ignoreProgressDeadline: true } : {}),
      ...(opts.claimGraceMs !== undefined ? { claimGraceMs: opts.claimGraceMs } : {}),
    });
    last = v;
    opts.onVerdict?.(v);
    if (v.kind !== 'waiting') return { kind: 'verdict', verdict: v, snapshot, at: t };
    if (t < opts.deadline) return undefined;
    const stale = watch.staleness(t);
    const seconds = Math.round((opts.deadline - watchStartedAt) / 1000);
    return {
      kind: 'verdict',
      verdict: {
        kind: 'failed',
        reason: 'timeout',
        message: `not ready within ${seconds}s; ${stale ? `${stale}; last seen` : 'still'} ${v.phase}: ${v.detail}`,
        failedUnits: [],
        ...(v.pod ? { pod: v.pod } : {}),
        ...(v.systemdState ? { systemdState: v.systemdState } : {}),
      },
      snapshot,
      at: t,
    };
  });
}

/**
 * Calls `step` at once, on every change of the watch, every half second (for grace periods and
 * deadlines) and when the signal aborts, until it returns a result: the loop of the rollout's
 * wait and of the soak's (soak.ts), each judging the snapshot its own way.
 */
export function evaluateUntil<R>(watch: RolloutWatch, signal: AbortSignal, step: () => R | undefined): Promise<R> {
  return new Promise<R>((resolve) => {
    let settled = false;
    let scheduled = false;
    const evaluate = () => {
      scheduled = false;
      if (settled) return;
      const r = step();
      if (r === undefined) return;
      settled = true;
      off();
      clearInterval(tick);
      signal.removeEventListener('abort', schedule);
      resolve(r);
    };
    function schedule() {
      if (scheduled || settled) return;
      scheduled = true;
      setImmediate(evaluate);
    }
    const off = watch.onChange(schedule);
    const tick = setInterval(evaluate, TICK_MS);
    signal.addEventListener('abort', schedule, { once: true });
    evaluate();
  });
}

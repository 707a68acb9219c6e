/**
 * Issue 48's goals: `deploy apply` against Helm 4's `helm upgrade --wait` of the same change in
 * the same run (P2a, P2b, P10 at 200 nodes), and deploy's 1-node apply at 200 nodes against its
 * own at 50 (P10); the cluster's floor beside each as a reference. Pure: medians in, verdicts out.
 */
import type { Spread } from './stats.ts';

/** deploy / Helm, of the medians: at most this (P2a, P2b, P10). */
export const HELM_GOAL = 1.0;
/** deploy's 1-node apply at 200 nodes / at 50: at most this (P10). */
export const GROWTH_GOAL = 2.0;

export interface Verdict {
  /** a / b of the medians; NaN when either was not measured */
  ratio: number;
  /** ratio <= goal; null when either side was not measured */
  met: boolean | null;
}

export function verdict(a: Spread | undefined, b: Spread | undefined, goal: number): Verdict {
  const ratio = a !== undefined && b !== undefined ? a.median / b.median : Number.NaN;
  return { ratio, met: Number.isFinite(ratio) ? ratio <= goal : null };
}

/** One size of change by Helm, run by run in the order measured; the push before each is not in `ms`. */
export interface HelmRuns {
  size: number;
  ms: Spread;
  runs: number[];
  pushMs: number[];
}

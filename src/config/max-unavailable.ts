/**
 * --max-unavailable, DEPLOY_MAX_UNAVAILABLE and the group plan's maxUnavailable: how many
 * changed nodes of a target may be down at once (the wave size, config/order-rules.ts).
 */

/** A number of nodes, or a percentage of a target's nodes (rounded down, at least 1). */
export type MaxUnavailable = { readonly count: number } | { readonly percent: number };

/** `10` -> {count: 10}, `20%` -> {percent: 20}; null when it is neither; undefined when unset. */
export function parseMaxUnavailable(text: string | number | undefined): MaxUnavailable | null | undefined {
  if (text === undefined) return undefined;
  const t = String(text).trim();
  const m = /^([0-9]{1,6})(%?)$/.exec(t);
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2] === '%') return n >= 1 && n <= 100 ? { percent: n } : null;
  return n >= 1 ? { count: n } : null;
}

/** The wave size for a target of `nodes` nodes. */
export function waveSize(max: MaxUnavailable, nodes: number): number {
  return 'count' in max ? max.count : Math.max(1, Math.floor((max.percent * nodes) / 100));
}


/**
 * P9 with a soak beside it (issue 47): what a soak should cost, and what it cost beyond that.
 * Every wave's nodes soak before the next wave starts, the last wave's too (docs/group-plan.md),
 * so an apply in W waves with a soak of S should take the same apply without the soak plus
 * W x S; what is left over is the soak's own cost (the steps' longer watches, the later waves'
 * boots no longer overlapping the earlier waves' readiness). Pure: the figures in, the verdict out.
 */

/** The overhead beyond the soak may be at most this share of the expected time. */
export const SOAK_OVERHEAD_TOLERANCE = 0.1;

export interface SoakCost {
  /** ceil(nodes / wave): how many times the run soaks. */
  readonly waveCount: number;
  readonly soakSeconds: number;
  /** The waves' apply without a soak, plus waveCount x soak. */
  readonly expectedMs: number;
  /** The soak variant's time beyond expectedMs (negative: faster than expected). */
  readonly overheadMs: number;
  readonly overheadPerWaveMs: number;
  /** The soak variant / expectedMs. */
  readonly ratio: number;
  readonly goal: string;
  readonly met: boolean;
}

export function soakCost(o: { nodes: number; wave: number; soakSeconds: number; wavesMs: number; soakMs: number }): SoakCost {
  const waveCount = Math.ceil(o.nodes / o.wave);
  const expectedMs = o.wavesMs + waveCount * o.soakSeconds * 1000;
  const overheadMs = o.soakMs - expectedMs;
  const ratio = o.soakMs / expectedMs;
  return {
    waveCount,
    soakSeconds: o.soakSeconds,
    expectedMs,
    overheadMs,
    overheadPerWaveMs: overheadMs / waveCount,
    ratio,
    goal: `waves with a soak of ${o.soakSeconds}s <= (waves without + ${waveCount} x ${o.soakSeconds}s) x ${1 + SOAK_OVERHEAD_TOLERANCE}`,
    met: ratio <= 1 + SOAK_OVERHEAD_TOLERANCE,
  };
}

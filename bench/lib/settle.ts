/**
 * A host at rest before measuring (issue 48): a group the bench has just brought up answers more
 * slowly than one at rest (its boots' work still draining), so once the groups are up the bench
 * waits while the 1-minute load average is still falling, up to a bound. A group's own probes
 * keep the load above zero for good; what is waited for is the end of the fall, not a level.
 */
import { loadavg } from 'node:os';

export interface LoadSample {
  atSeconds: number;
  load1: number;
}

/**
 * Settled: the newest sample's load is at least `keep` of the load `windowSeconds` before it (it
 * fell by less than 1 - keep over the window), or rose. False until the samples span the window.
 */
export function loadSettled(samples: readonly LoadSample[], windowSeconds = 60, keep = 0.9): boolean {
  const now = samples.at(-1);
  if (now === undefined) return false;
  const then = samples.findLast((s) => now.atSeconds - s.atSeconds >= windowSeconds);
  return then !== undefined && now.load1 >= keep * then.load1;
}

export interface Settled {
  seconds: number;
  /** the 1-minute load when the wait began and when it ended */
  loadBefore: number;
  loadAfter: number;
  /** false: the bound was reached with the load still falling */
  settled: boolean;
}

/** Samples the load every 10 s until loadSettled or `maxSeconds` (0: no wait). */
export async function settleHost(maxSeconds: number, say: (msg: string) => void): Promise<Settled> {
  const samples: LoadSample[] = [];
  const t0 = performance.now();
  for (;;) {
    const atSeconds = (performance.now() - t0) / 1000;
    samples.push({ atSeconds, load1: loadavg()[0]! });
    const settled = loadSettled(samples);
    if (settled || atSeconds >= maxSeconds) {
      const out = { seconds: atSeconds, loadBefore: samples[0]!.load1, loadAfter: samples.at(-1)!.load1, settled };
      say(`host ${settled ? 'settled' : maxSeconds <= 0 ? 'not left to settle' : `still settling after the bound of ${maxSeconds} s`}: load ${out.loadBefore.toFixed(1)} -> ${out.loadAfter.toFixed(1)} in ${out.seconds.toFixed(0)} s`);
      return out;
    }
    await new Promise((r) => setTimeout(r, Math.min(10_000, Math.max(0, (maxSeconds - atSeconds) * 1000))));
  }
}

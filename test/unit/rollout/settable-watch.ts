/** A rollout watch whose snapshot a test sets, as the list+watch would after each change. */
import type { RolloutWatch } from '../../../src/rollout/rollout-watch.js';
import type { RolloutSnapshot } from '../../../src/rollout/snapshot.js';

export function settableWatch(first: RolloutSnapshot) {
  let snap = first;
  let stale: string | undefined;
  const listeners = new Set<() => void>();
  const watch: RolloutWatch = {
    snapshot: () => snap,
    staleness: () => stale,
    onChange: (cb) => (listeners.add(cb), () => listeners.delete(cb)),
    stop: async () => {},
  };
  return { watch, set: (s: RolloutSnapshot) => ((snap = s), listeners.forEach((l) => l())), setStale: (why: string) => (stale = why) };
}

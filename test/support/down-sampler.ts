/**
 * Samples, every 250 ms while `run` runs, how many nodes are down: `countDown` reads it from the
 * API (undefined when the read failed: not a sample). For the waves' e2e and bench (P8).
 */
export async function downWhile<T>(run: Promise<T>, countDown: () => Promise<number | undefined>): Promise<{ result: T; maxDown: number; samples: number }> {
  let done = false;
  let maxDown = 0;
  let samples = 0;
  const sampler = (async () => {
    while (!done) {
      const down = await countDown();
      if (down !== undefined) {
        maxDown = Math.max(maxDown, down);
        samples += 1;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const result = await run;
  done = true;
  await sampler;
  return { result, maxDown, samples };
}

/** The Deployments of a `kubectl get deployments -o json` list without a ready pod. */
export function deploymentsDown(listJson: string): number {
  return JSON.parse(listJson).items.filter((d: { status?: { readyReplicas?: number } }) => (d.status?.readyReplicas ?? 0) < 1).length;
}

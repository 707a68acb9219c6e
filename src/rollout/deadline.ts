/** Bounded waiting: every wait of the rollout ends at a deadline or on the abort signal. */

export class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${Math.round(ms / 100) / 10}s`);
    this.name = 'DeadlineError';
  }
}

/** Resolves after `ms`, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The promise's result, or a DeadlineError after `ms`, or the signal's reason on abort. The
 * client's requests take no AbortSignal, so a late answer is dropped, not cancelled.
 */
export function withDeadline<T>(what: string, promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => finish(() => reject(signal?.reason ?? new Error('aborted')));
    const t = setTimeout(() => finish(() => reject(new DeadlineError(what, ms))), Math.max(0, ms));
    let settled = false;
    function finish(f: () => void) {
      if (settled) return;
      settled = true;
      clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
      f();
    }
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => finish(() => resolve(v)),
      (e) => finish(() => reject(e)),
    );
  });
}

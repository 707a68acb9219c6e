/**
 * Bounded waiting (house rule 7: every wait has a deadline, a backoff and an AbortSignal): a
 * sleep that an abort ends, a deadline around a promise, a retry of transient failures. A leaf
 * module beside errors.ts and log.ts, importing nothing of ours: the cluster client (src/kube/),
 * the rollout and the state's lock all wait, and none of them should reach into another layer
 * for a sleep (state/run-lock.ts imported it from rollout/ before).
 */

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

/** The HTTP status of a failed API request (ApiException's `code`, or `statusCode`). */
export function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

/** Transport and server-side failures worth another try: the request may well pass next time. */
export function isTransient(err: unknown): boolean {
  if (err instanceof DeadlineError) return true;
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const status = statusCode(err);
  if (status !== undefined) return status === 429 || status >= 500;
  const sys = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : '';
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'].includes(sys);
}

export interface RetryOptions {
  /** Tries in all (default 4: with 15 s per request and 1, 2, 4 s between, about a minute). */
  readonly attempts?: number;
  readonly firstDelayMs?: number;
  readonly signal?: AbortSignal;
  /** Told before each new try. */
  readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs an idempotent request again after a transient failure (isTransient), with doubling
 * delays; a loaded API server that misses one answer must not fail a rollout that is
 * otherwise going fine (seen: "list Events: no answer within 15s" at load 137 on 2 cores).
 * Anything else, the last failure, or an abort, goes to the caller.
 */
export async function retryTransient<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 4;
  let delay = opts.firstDelayMs ?? 1_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isTransient(err) || opts.signal?.aborted) throw err;
      opts.onRetry?.(err, attempt, delay);
      await sleep(delay, opts.signal);
      if (opts.signal?.aborted) throw err;
      delay *= 2;
    }
  }
}

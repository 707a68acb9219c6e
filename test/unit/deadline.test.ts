import { describe, expect, it } from 'vitest';
import { DeadlineError, isTransient, retryTransient } from '../../src/deadline.js';

/** A request that fails with the given errors, one per call, then answers `ok`. */
function flaky(errors: unknown[]) {
  let calls = 0;
  const fn = async () => {
    calls += 1;
    if (errors.length > 0) throw errors.shift();
    return 'ok';
  };
  return { fn, calls: () => calls };
}

describe('retryTransient', () => {
  it('GIVEN a request that misses its deadline twice THEN the third try answers', async () => {
    const r = flaky([new DeadlineError('list Events', 15_000), new DeadlineError('list Events', 15_000)]);
    const retries: number[] = [];
    await expect(retryTransient(r.fn, { firstDelayMs: 1, onRetry: (_e, n) => retries.push(n) })).resolves.toBe('ok');
    expect(r.calls()).toBe(3);
    expect(retries).toEqual([1, 2]);
  });

  it('GIVEN 5xx, 429 and a refused connection THEN each is tried again', async () => {
    const r = flaky([{ code: 503 }, { statusCode: 429 }, Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })]);
    await expect(retryTransient(r.fn, { firstDelayMs: 1 })).resolves.toBe('ok');
    expect(r.calls()).toBe(4);
  });

  it('GIVEN an answer of the server about the request (403, 404, 422) THEN it goes to the caller at once', async () => {
    for (const code of [403, 404, 422]) {
      const r = flaky([{ code }]);
      await expect(retryTransient(r.fn, { firstDelayMs: 1 })).rejects.toEqual({ code });
      expect(r.calls()).toBe(1);
    }
  });

  it('GIVEN a server that never answers THEN the last failure goes to the caller after the tries', async () => {
    const errors = [1, 2, 3, 4, 5].map((i) => new DeadlineError(`try ${i}`, 10));
    const r = flaky(errors);
    await expect(retryTransient(r.fn, { attempts: 3, firstDelayMs: 1 })).rejects.toThrow('try 3: no answer within 0s');
    expect(r.calls()).toBe(3);
  });

  it('GIVEN an abort while waiting to try again THEN no further try is made', async () => {
    const stop = new AbortController();
    const r = flaky([new DeadlineError('a', 1), new DeadlineError('b', 1)]);
    // the abort comes once the first try failed and the wait before the next has begun
    const onRetry = () => {
      setImmediate(() => stop.abort());
    };
    const p = retryTransient(r.fn, { firstDelayMs: 60_000, signal: stop.signal, onRetry });
    await expect(p).rejects.toThrow('a: no answer');
    expect(r.calls()).toBe(1);
  });

  it('isTransient: deadlines, 5xx, 429 and connection errors only', () => {
    expect(isTransient(new DeadlineError('x', 1))).toBe(true);
    expect(isTransient({ code: 500 })).toBe(true);
    expect(isTransient({ code: 409 })).toBe(false);
    expect(isTransient(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }))).toBe(true);
    expect(isTransient(new Error('parse error'))).toBe(false);
  });
});

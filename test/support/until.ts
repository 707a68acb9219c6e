/**
 * Waits on something the code under test shows (a line on a stream, a file, a lock held, a
 * process's state) instead of sleeping for a time that is long enough on an idle machine and
 * too short on a loaded one (issue 49). Each wait has a deadline, and its failure names what
 * did not happen and what was seen instead.
 */

export interface UntilOptions {
  /** How long to wait at most; default 30 s. */
  readonly timeoutMs?: number;
  /** How often to look; default 20 ms. */
  readonly intervalMs?: number;
  /** What was seen, for the failure's message (e.g. the output so far). */
  readonly seen?: () => string;
  /** Ends the wait at once with this error when it returns one (e.g. the process ended first). */
  readonly failIf?: () => string | undefined;
}

/** Resolves with `probe`'s first value that is neither undefined nor false; rejects at the deadline naming `what`. */
export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, opts: UntilOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const seen = () => (opts.seen ? `; seen: ${opts.seen()}` : '');
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    const failed = opts.failIf?.();
    if (failed !== undefined) throw new Error(`${what} did not happen: ${failed}${seen()}`);
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms${seen()}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20));
  }
}

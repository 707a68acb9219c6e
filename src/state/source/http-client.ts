/**
 * deploy's own requests to an OpenTofu http state backend (the run's lock, the operator
 * verbs, `deploy state migrate`): one request with basic auth and a deadline, and the LOCK /
 * UNLOCK exchanges as the protocol defines them: 200 is granted, 423 or 409 answer with the
 * holder's LockInfo (https://opentofu.org/docs/language/settings/backends/http/ and the
 * client, internal/backend/remote-state/http/client.go).
 */
import { ToolError } from '../../errors.js';
import { LockInfoSchema, type LockInfo } from '../lock-info.js';

/** Wait at most this long for one answer of a backend. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The deadline of a request that frees a lock or saves a state. Such a request never takes the
 * run's signal: an interrupt must not cut the very request that cleans up after the run (it
 * did: "UNLOCK ... failed: SIGINT" right after "stopping cleanly"). Short, so that a stopping
 * run that meets a dead backend still ends soon, naming what it left; above the 15 s a
 * PostgreSQL-backed server may wait for another server's transaction on the key
 * (docs/state-backends.md).
 */
export const CLEANUP_TIMEOUT_MS = 20_000;

export interface BackendAuth {
  readonly username?: string | undefined;
  readonly password?: string | undefined;
}

export async function backendRequest(
  method: string,
  url: URL,
  opts: BackendAuth & { readonly body?: string | Buffer | undefined; readonly signal?: AbortSignal | undefined; readonly timeoutMs?: number | undefined; readonly headers?: Readonly<Record<string, string>> },
): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.username) headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password ?? ''}`).toString('base64')}`;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const signals = [AbortSignal.timeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS), ...(opts.signal ? [opts.signal] : [])];
  try {
    return await fetch(url, { method, headers, body: opts.body, signal: AbortSignal.any(signals), redirect: 'error' });
  } catch (err) {
    throw new ToolError(`${method} ${url.origin}${url.pathname} failed: ${(err as Error).message}`, {
      hint: 'check the backend address and that the state backend is running',
      cause: err,
    });
  }
}

export async function httpFailure(method: string, url: URL, res: Response, text?: string): Promise<ToolError> {
  const body = text ?? (await res.text().catch(() => ''));
  return new ToolError(`${method} ${url.origin}${url.pathname} answered ${res.status}: ${body.slice(0, 300)}`);
}

/** The holder's LockInfo from a 423/409 answer, when the body is one. */
function holderOf(text: string): LockInfo | undefined {
  try {
    const parsed = LockInfoSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export type LockAnswer = { kind: 'acquired' } | { kind: 'held'; holder: LockInfo | undefined };

/**
 * One LOCK request; any answer but 200, 409 and 423 is a ToolError naming the status. Never
 * aborted by the run's signal (the caller checks it after): a LOCK cut mid-flight may have
 * been granted all the same, and its caller would not know to release it.
 */
export async function requestLock(url: URL, method: string, info: LockInfo, opts: BackendAuth): Promise<LockAnswer> {
  const res = await backendRequest(method, url, { username: opts.username, password: opts.password, body: JSON.stringify(info) });
  const text = await res.text();
  if (res.status === 200) return { kind: 'acquired' };
  if (res.status === 423 || res.status === 409) return { kind: 'held', holder: holderOf(text) };
  throw await httpFailure(method, url, res, text);
}

export type UnlockAnswer = { kind: 'released'; holder: LockInfo | undefined } | { kind: 'held'; holder: LockInfo | undefined };

/**
 * One UNLOCK request with `{ID}` (and the rest of `info`); 423/409: another lock is held.
 * Never aborted by the run's signal; its own deadline is CLEANUP_TIMEOUT_MS.
 */
export async function requestUnlock(url: URL, method: string, info: LockInfo, opts: BackendAuth): Promise<UnlockAnswer> {
  const res = await backendRequest(method, url, { username: opts.username, password: opts.password, body: JSON.stringify(info), timeoutMs: CLEANUP_TIMEOUT_MS });
  const text = await res.text();
  if (res.status === 423 || res.status === 409) return { kind: 'held', holder: holderOf(text) };
  if (res.status !== 200) throw await httpFailure(method, url, res, text);
  const holder = holderOf(text);
  return { kind: 'released', holder: holder && (holder.Who || holder.Created) ? holder : undefined };
}

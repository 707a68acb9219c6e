/**
 * What each request of the OpenTofu http backend protocol does with the store
 * (https://opentofu.org/docs/language/settings/backends/http/), and the backend's own
 * read-only routes; server.ts reads the request and dispatches here.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../../log.js';
import { HttpProblem, type Reply } from './http-exchange.js';
import { describeLock, type LockInfo, parseLockInfo } from '../lock-info.js';
import { parseStateHeader } from '../state-document.js';
import { checkStateKey } from '../state-key.js';
import type { StateStore } from '../store/store.js';

/** The backend's own read-only routes (`deploy state list|versions` over HTTP). */
export const ADMIN_PREFIX = '/_deploy/v1/';

/** GET (`?serial=` for an older version): the stored bytes, or 404 when there are none. */
export async function getState(store: StateStore, key: string, url: URL, ifNoneMatch?: string): Promise<Reply> {
  const serialParam = url.searchParams.get('serial');
  let serial: number | undefined;
  if (serialParam !== null) {
    serial = Number(serialParam);
    if (!Number.isSafeInteger(serial) || serial < 0) throw new HttpProblem(400, `serial "${serialParam}" is not a non-negative integer`);
  }
  // a reader that kept what it read of this very version (the verified no-op check's state
  // view: src/workflow/drift/cached-target-state.ts): 304, without reading the body from the store
  if (serial === undefined && ifNoneMatch !== undefined) {
    const latest = await store.latest(key);
    if (latest !== undefined && !latest.deleted && ifNoneMatch.split(',').some((tag) => tag.trim() === `"${latest.sha256}"`)) {
      return { status: 304, headers: { ETag: `"${latest.sha256}"`, 'X-Deploy-State-Serial': String(latest.serial) } };
    }
  }
  const state = await store.read(key, serial);
  // 404 only when the store answered "nothing here"; a storage error threw above
  if (!state) return { status: 404, body: { error: serial === undefined ? `no state stored under "${key}"` : `no version with serial ${serial} under "${key}"` } };
  return {
    status: 200,
    body: state.body,
    headers: {
      'Content-Type': 'application/json',
      'Content-MD5': createHash('md5').update(state.body).digest('base64'),
      ETag: `"${state.sha256}"`,
      'X-Deploy-State-Serial': String(state.serial),
    },
  };
}

/** POST/PUT (`?ID=` while locked): the next version, if the update rules allow it (409 when not, with why). */
export async function updateState(store: StateStore, key: string, url: URL, body: Buffer, log: Logger | undefined): Promise<Reply> {
  if (body.length === 0) throw new HttpProblem(400, 'the body is empty: expected a state document');
  const parsed = parseStateHeader(body);
  if (!parsed.ok) throw new HttpProblem(400, parsed.problem);
  const id = url.searchParams.get('ID') ?? undefined;
  const result = await store.update(key, body, parsed.header, id || undefined);
  switch (result.kind) {
    case 'stored':
    case 'identical':
      return { status: 200, body: { serial: result.version.serial, sha256: result.version.sha256, stored: result.kind === 'stored' } };
    case 'refused':
      // tofu shows only "HTTP error: 409": say why where the operator can find it
      log?.warn({ kind: 'state-update-refused', key, serial: parsed.header.serial, reason: result.reason }, `refused an update of ${key}: ${result.reason}`);
      return { status: 409, body: { error: result.reason } };
    case 'lock-mismatch':
      return lockMismatchReply(key, id, result.holder, 'update');
  }
}

/**
 * DELETE (`?ID=` while locked, as for POST): stores a deletion as the next version; the
 * versions before it stay readable (`?serial=`, `deploy state versions`). OpenTofu's http
 * client sends it when a state is removed (its client test ends with one).
 */
export async function deleteState(store: StateStore, key: string, url: URL, log: Logger | undefined): Promise<Reply> {
  const id = url.searchParams.get('ID') || undefined;
  const result = await store.delete(key, id);
  switch (result.kind) {
    case 'deleted':
      log?.warn({ kind: 'state-deleted', key, serial: result.version.serial }, `deleted ${key} (serial ${result.version.serial} stays readable)`);
      return { status: 200, body: { deleted: true, serial: result.version.serial } };
    case 'already-deleted':
      return { status: 200, body: { deleted: true, serial: result.version.serial } };
    case 'not-found':
      return { status: 404, body: { error: `no state stored under "${key}"` } };
    case 'lock-mismatch':
      return lockMismatchReply(key, id, result.holder, 'deletion');
  }
}

/** 423 with the holder when another holds the lock; 409 when `?ID=` names a lock nobody holds. */
function lockMismatchReply(key: string, id: string | undefined, holder: LockInfo | undefined, what: string): Reply {
  if (holder) {
    return lockedReply(holder, id ? `the lock is held by another ID (${describeLock(holder)}), not ${id}` : `the state is locked (${describeLock(holder)}): send ?ID=<lock id>`);
  }
  return { status: 409, body: { error: `the ${what} names lock ${id}, but "${key}" is not locked (was it force-unlocked?): refusing a write that may overwrite another run's` } };
}

/** LOCK: the lock taken, or 423 with its holder. */
export async function lockState(store: StateStore, key: string, body: Buffer): Promise<Reply> {
  const parsed = parseLockInfo(body);
  if (!parsed.ok) throw new HttpProblem(400, parsed.problem);
  const result = await store.lock(key, parsed.info);
  if (result.kind === 'held') return lockedReply(result.holder, `the state is locked: ${describeLock(result.holder)}`);
  return { status: 200, body: parsed.info };
}

/** UNLOCK with the holder's LockInfo (or just its ID: force-unlock). */
export async function unlockState(store: StateStore, key: string, body: Buffer): Promise<Reply> {
  if (body.length === 0) {
    throw new HttpProblem(400, 'UNLOCK needs a LockInfo body with the holder\'s "ID" (deploy state unlock <ID> sends one)');
  }
  const parsed = parseLockInfo(body);
  if (!parsed.ok) throw new HttpProblem(400, parsed.problem);
  const result = await store.unlock(key, parsed.info.ID);
  if (result.kind === 'held') return lockedReply(result.holder, `lock ${parsed.info.ID} is not the one held: ${describeLock(result.holder)}`);
  return { status: 200, body: result.kind === 'released' ? result.holder : { ID: parsed.info.ID } };
}

/**
 * 423 with the holder's LockInfo as the JSON body (tofu reads it and prints the holder);
 * the reason travels in a header so the body stays exactly a LockInfo.
 */
function lockedReply(holder: LockInfo, reason: string): Reply {
  return { status: 423, body: holder, headers: { 'X-Deploy-Reason': reason.replace(/[^\x20-\x7e]/g, '?') } };
}

/** The backend's own read-only routes under ADMIN_PREFIX: states, versions/<key>, locks/<ID>. */
export async function adminRoute(store: StateStore, method: string, url: URL): Promise<Reply> {
  if (method !== 'GET') return { status: 405, body: { error: 'read-only' }, headers: { Allow: 'GET' } };
  const rest = url.pathname.slice(ADMIN_PREFIX.length);
  if (rest === 'states') return { status: 200, body: await store.list() };
  const [kind, ...tail] = rest.split('/');
  const arg = decodeURIComponent(tail.join('/'));
  if (kind === 'versions') {
    const problem = checkStateKey(arg);
    if (problem) throw new HttpProblem(400, problem);
    return { status: 200, body: await store.versions(arg) };
  }
  if (kind === 'locks' && arg) return { status: 200, body: await store.findLock(arg) };
  throw new HttpProblem(400, `unknown route ${url.pathname}: ${ADMIN_PREFIX}states, ${ADMIN_PREFIX}versions/<key>, ${ADMIN_PREFIX}locks/<ID>`);
}

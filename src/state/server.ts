import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { checkBasicAuth, type Credentials } from './credentials.js';
import { type ListenAddress, urlHost } from './listen-address.js';
import { describeLock, type LockInfo, parseLockInfo } from './lock-info.js';
import { parseStateHeader } from './state-document.js';
import { checkStateKey } from './state-key.js';
import { type StateStore, StoreUnavailableError } from './store.js';

/** Default largest request body: a state of a few hundred nodes is a few MB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** LOCK/UNLOCK bodies are a few hundred bytes. */
const MAX_LOCK_BODY_BYTES = 64 * 1024;
/** The backend's own read-only routes (`deploy state list|versions` over HTTP). */
export const ADMIN_PREFIX = '/_deploy/v1/';

export interface StateServerOptions {
  readonly store: StateStore;
  /** Basic-auth credentials every request must carry; none: no auth (loopback only). */
  readonly credentials?: Credentials | undefined;
  /** @default DEFAULT_MAX_BODY_BYTES */
  readonly maxBodyBytes?: number | undefined;
  readonly logger?: Logger | undefined;
}

interface Reply {
  status: number;
  body?: Buffer | string | object;
  headers?: Record<string, string>;
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The OpenTofu http backend protocol, one state per path `/<key>`
 * (https://opentofu.org/docs/language/settings/backends/http/ and the client,
 * https://github.com/opentofu/opentofu/blob/main/internal/backend/remote-state/http/client.go):
 * GET (200 with the state, 404 when there is none), POST/PUT and DELETE (`?ID=<lock id>`
 * while locked), LOCK and UNLOCK with LockInfo bodies; a held lock answers 423 with the holder's LockInfo.
 * Client mistakes are 4xx; a storage failure is a 5xx, never a 404 (a 404 makes tofu start a
 * new lineage and plan to create everything again).
 */
export function createStateRequestHandler(opts: StateServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = opts.logger;
  return (req, res) => {
    const started = performance.now();
    let key: string | undefined;
    void (async (): Promise<Reply> => {
      if (opts.credentials && !checkBasicAuth(req.headers.authorization, opts.credentials)) {
        return { status: 401, body: { error: 'authentication required' }, headers: { 'WWW-Authenticate': 'Basic realm="deploy state", charset="UTF-8"' } };
      }
      const url = new URL(req.url ?? '/', 'http://backend');
      if (url.pathname.startsWith(ADMIN_PREFIX)) return adminRoute(opts.store, req.method ?? '', url);
      let decoded: string;
      try {
        decoded = decodeURIComponent(url.pathname.slice(1));
      } catch {
        throw new HttpProblem(400, 'the path is not valid percent-encoding');
      }
      const problem = checkStateKey(decoded);
      if (problem) throw new HttpProblem(400, problem);
      key = decoded;
      switch (req.method) {
        case 'GET':
          return getState(opts.store, key, url);
        case 'POST':
        case 'PUT':
          return updateState(opts.store, key, url, await readBody(req, maxBody), log);
        case 'LOCK':
          return lockState(opts.store, key, await readBody(req, MAX_LOCK_BODY_BYTES));
        case 'UNLOCK':
          return unlockState(opts.store, key, await readBody(req, MAX_LOCK_BODY_BYTES));
        case 'DELETE':
          return deleteState(opts.store, key, url, log);
        default:
          return { status: 405, body: { error: `method ${req.method} is not supported` }, headers: { Allow: 'GET, POST, PUT, DELETE, LOCK, UNLOCK' } };
      }
    })()
      .catch((err: unknown): Reply => {
        if (err instanceof HttpProblem) return { status: err.status, body: { error: err.message } };
        const message = String((err as Error)?.message ?? err);
        log?.error({ kind: 'state-storage-failed', key, method: req.method, err: message }, 'state storage failed');
        // tofu retries a 5xx (TF_HTTP_RETRY_MAX): an unavailable database answers 503 with
        // Retry-After, any other storage failure 500; never a 404, never an empty state
        return err instanceof StoreUnavailableError
          ? { status: 503, body: { error: `${message}; retry` }, headers: { 'Retry-After': '1' } }
          : { status: 500, body: { error: `the state backend could not use its storage: ${message}` } };
      })
      .then((reply) => {
        send(res, reply);
        log?.debug({ kind: 'state-request', method: req.method, key, status: reply.status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'state request');
      });
  };
}

async function getState(store: StateStore, key: string, url: URL): Promise<Reply> {
  const serialParam = url.searchParams.get('serial');
  let serial: number | undefined;
  if (serialParam !== null) {
    serial = Number(serialParam);
    if (!Number.isSafeInteger(serial) || serial < 0) throw new HttpProblem(400, `serial "${serialParam}" is not a non-negative integer`);
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

async function updateState(store: StateStore, key: string, url: URL, body: Buffer, log: Logger | undefined): Promise<Reply> {
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
async function deleteState(store: StateStore, key: string, url: URL, log: Logger | undefined): Promise<Reply> {
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

async function lockState(store: StateStore, key: string, body: Buffer): Promise<Reply> {
  const parsed = parseLockInfo(body);
  if (!parsed.ok) throw new HttpProblem(400, parsed.problem);
  const result = await store.lock(key, parsed.info);
  if (result.kind === 'held') return lockedReply(result.holder, `the state is locked: ${describeLock(result.holder)}`);
  return { status: 200, body: parsed.info };
}

async function unlockState(store: StateStore, key: string, body: Buffer): Promise<Reply> {
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

async function adminRoute(store: StateStore, method: string, url: URL): Promise<Reply> {
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

/**
 * Reads the body up to `limit` bytes (413 beyond) and checks `Content-MD5` when sent (400
 * when it does not match: the body was damaged on the way).
 */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    throw new HttpProblem(413, `the body is ${declared} bytes, more than the limit of ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new HttpProblem(413, `the body is more than the limit of ${limit} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof HttpProblem) throw err;
    // the client went away mid-body: a client matter, not a storage failure
    throw new HttpProblem(400, `the body was cut off: ${(err as Error).message}`);
  }
  const body = Buffer.concat(chunks, size);
  const md5Header = req.headers['content-md5'];
  if (typeof md5Header === 'string' && md5Header !== '') {
    const expected = Buffer.from(md5Header.trim(), 'base64');
    if (expected.length !== 16) throw new HttpProblem(400, `Content-MD5 "${md5Header}" is not a base64 MD5 digest`);
    const actual = createHash('md5').update(body).digest();
    if (!actual.equals(expected)) throw new HttpProblem(400, 'the body does not match its Content-MD5: it was damaged on the way; send it again');
  }
  return body;
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const body = reply.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...reply.headers, 'Content-Length': body.length };
  // an answer before the body was read (401, 413, a bad key): close rather than drain the rest
  if (!res.req.complete) headers.Connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(body);
}

export interface RunningStateServer {
  /** `http://host:port` (no trailing slash). */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/** Time a closing server gives open requests to finish before it cuts them. */
const CLOSE_DEADLINE_MS = 5_000;

/** Listens on `listen` (port 0: any free port) and serves the protocol. */
export async function startStateServer(opts: StateServerOptions & { readonly listen: ListenAddress }): Promise<RunningStateServer> {
  const server = createServer(
    { requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 },
    createStateRequestHandler(opts),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.listen.host, port: opts.listen.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${urlHost(address.address, address.port)}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    server,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), CLOSE_DEADLINE_MS);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      })),
  };
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../log.js';
import { checkBasicAuth, type Credentials } from './credentials.js';
import { HttpProblem, readBody, type Reply, send } from './http-exchange.js';
import { type ListenAddress, urlHost } from './listen-address.js';
import { checkStateKey } from '../state-key.js';
import { ADMIN_PREFIX, adminRoute, deleteState, getState, lockState, unlockState, updateState } from './state-routes.js';
import { type StateStore, StoreUnavailableError } from '../store/store.js';

/** Default largest request body: a state of a few hundred nodes is a few MB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** LOCK/UNLOCK bodies are a few hundred bytes. */
const MAX_LOCK_BODY_BYTES = 64 * 1024;
// http-source.ts imports it from here
export { ADMIN_PREFIX } from './state-routes.js';

export interface StateServerOptions {
  readonly store: StateStore;
  /** Basic-auth credentials every request must carry; none: no auth (loopback only). */
  readonly credentials?: Credentials | undefined;
  /** @default DEFAULT_MAX_BODY_BYTES */
  readonly maxBodyBytes?: number | undefined;
  readonly logger?: Logger | undefined;
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
          return getState(opts.store, key, url, req.headers['if-none-match']);
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


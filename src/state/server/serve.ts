import { ConfigError, hintOf, type InputIssue, ToolError } from '../../errors.js';
import { credentialsFromEnv, PASSWORD_ENV, USERNAME_ENV } from './credentials.js';
import { parseListenAddress } from './listen-address.js';
import { describeLocation, openStore, resolveStoreLocation } from '../store/open-store.js';
import { defaultStateDataDir } from '../../config/backend-coordinates.js';
import { startStateServer } from './server.js';
import type { Logger } from '../../log.js';
import type { StateStore } from '../store/store.js';

export interface ServeOptions {
  readonly listen: string;
  /** A data directory (SQLite) or a postgres:// URL without a password. */
  readonly data?: string | undefined;
  readonly maxBodyMb: number;
  /** DEPLOY_STATE_* (credentials, database, data directory); never process.env. */
  readonly env: NodeJS.ProcessEnv;
  /** The server stops when it aborts. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Told the server's URL once it listens (`deploy state serve` prints it). */
  readonly onServing: (url: string) => void;
}

/** `deploy state serve`: validates the exposure and the storage, serves until the run's signal aborts. */
export async function serveState(opts: ServeOptions): Promise<void> {
  const listen = parseListenAddress(opts.listen);
  const creds = credentialsFromEnv(opts.env);
  const location = resolveStoreLocation(opts.data, opts.env, defaultStateDataDir(opts.env));
  const issues: InputIssue[] = [];
  if ('problem' in listen) issues.push({ where: '--listen', message: listen.problem });
  if (creds && 'problem' in creds) issues.push({ where: `${USERNAME_ENV}/${PASSWORD_ENV}`, message: creds.problem });
  if ('issues' in location) issues.push(...location.issues);
  if (!('problem' in listen) && !listen.loopback && !creds) {
    issues.push({
      where: '--listen',
      message: `${listen.host} is reachable from other machines: set ${USERNAME_ENV} and ${PASSWORD_ENV} (basic auth) or listen on 127.0.0.1`,
    });
  }
  if (issues.length > 0 || 'problem' in listen || (creds && 'problem' in creds) || 'issues' in location) {
    throw new ConfigError('cannot serve the state backend', issues);
  }
  const where = describeLocation(location);
  const log = opts.logger;
  let store: StateStore;
  try {
    store = await openStore(location, log);
  } catch (err) {
    throw new ToolError(`cannot open the state data in ${where}: ${(err as Error).message}`, {
      hint: hintOf(err, location.kind === 'postgres' ? 'check that the database is up and reachable, and the user, password and database name' : undefined),
      cause: err,
    });
  }
  let server;
  try {
    server = await startStateServer({
      store,
      credentials: creds,
      listen,
      maxBodyBytes: Math.floor(opts.maxBodyMb * 1024 * 1024),
      logger: log,
    });
  } catch (err) {
    await store.close();
    throw new ToolError(`cannot listen on ${opts.listen}: ${(err as Error).message}`, { cause: err });
  }
  log.info({ kind: 'state-serving', url: server.url, store: location.kind, data: where, auth: Boolean(creds) }, 'state backend serving');
  opts.onServing(server.url);
  await new Promise<void>((resolve) => {
    if (opts.signal.aborted) resolve();
    else opts.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  await store.close();
  log.info({ kind: 'state-stopped' }, 'state backend stopped');
}

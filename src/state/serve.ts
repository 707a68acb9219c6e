import type { CliContext } from '../cli/context.js';
import { ConfigError, ToolError } from '../errors.js';
import { credentialsFromEnv, PASSWORD_ENV, USERNAME_ENV } from './credentials.js';
import { parseListenAddress } from './listen-address.js';
import { defaultStateDataDir } from './paths.js';
import { startStateServer } from './server.js';
import { StateStore } from './store.js';

export interface ServeOptions {
  readonly listen: string;
  readonly data?: string | undefined;
  readonly maxBodyMb: number;
  readonly ctx: CliContext;
}

/** `deploy state serve`: validates the exposure, serves until the run's signal aborts. */
export async function serveState(opts: ServeOptions): Promise<void> {
  const { ctx } = opts;
  const listen = parseListenAddress(opts.listen);
  const creds = credentialsFromEnv(ctx.env);
  const issues = [];
  if ('problem' in listen) issues.push({ where: '--listen', message: listen.problem });
  if (creds && 'problem' in creds) issues.push({ where: `${USERNAME_ENV}/${PASSWORD_ENV}`, message: creds.problem });
  if (!('problem' in listen) && !listen.loopback && !creds) {
    issues.push({
      where: '--listen',
      message: `${listen.host} is reachable from other machines: set ${USERNAME_ENV} and ${PASSWORD_ENV} (basic auth) or listen on 127.0.0.1`,
    });
  }
  if (issues.length > 0 || 'problem' in listen || (creds && 'problem' in creds)) {
    throw new ConfigError('cannot serve the state backend', issues);
  }
  const dataDir = opts.data ?? defaultStateDataDir(ctx.env);
  const log = ctx.logger();
  let store: StateStore;
  try {
    store = StateStore.open(dataDir);
  } catch (err) {
    throw new ToolError(`cannot open the state data in ${dataDir}: ${(err as Error).message}`, { cause: err });
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
    store.close();
    throw new ToolError(`cannot listen on ${opts.listen}: ${(err as Error).message}`, { cause: err });
  }
  log.info({ kind: 'state-serving', url: server.url, dataDir, auth: Boolean(creds) }, 'state backend serving');
  ctx.stdout.write(`${server.url}\n`);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  store.close();
  log.info({ kind: 'state-stopped' }, 'state backend stopped');
}

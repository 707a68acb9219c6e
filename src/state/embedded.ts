import { randomBytes } from 'node:crypto';
import { httpBackend, tofuBackendVariables, type BackendCoordinates, type HttpBackendCoordinates } from '../config/backend-coordinates.js';
import type { Logger } from '../log.js';
import { DeployError, ExitCode, hintOf, InterruptedError, ToolError } from '../errors.js';
import type { Credentials } from './server/credentials.js';
import { startStateServer } from './server/server.js';
import { checkStateKey } from './state-key.js';
import { SqliteStateStore } from './store/sqlite-store.js';

/** The state at `address` of a `deploy state serve` backend (LOCK/UNLOCK there, basic auth). */
export function servedBackend(address: string, credentials: Credentials): HttpBackendCoordinates {
  return httpBackend('TF_HTTP_ADDRESS', address, {
    lockAddress: address,
    unlockAddress: address,
    lockMethod: 'LOCK',
    unlockMethod: 'UNLOCK',
    username: credentials.username,
    password: credentials.password,
  });
}

/** tofu's TF_HTTP_* variables for the state at `address` of a `deploy state serve` backend. */
export function httpBackendEnv(address: string, credentials: Credentials): Record<string, string> {
  return tofuBackendVariables(servedBackend(address, credentials));
}

/**
 * The state of one target as a run reads and writes it: a typed value (its address, the lock and
 * unlock addresses and methods, the credentials: `http`) and whether this process serves it.
 * tofu's TF_HTTP_* are rendered from it (config/backend-coordinates.ts tofuBackendVariables,
 * in the target's environment); no reader takes it back from those variables.
 */
export interface TargetBackend {
  /** The state of this target: where tofu and the run's lock reach it (addresses keyed). */
  readonly http: HttpBackendCoordinates;
  /** True when this process serves the state (no TF_HTTP_ADDRESS was set). */
  readonly embedded: boolean;
}

export interface StateBackend extends TargetBackend {
  /** The state's address (`http.address`). */
  readonly address: string;
  /** Stops the embedded server (idempotent; nothing for an external backend). Call it after
   * tofu has exited: tofu releases its lock through the server on the way out. */
  close(): Promise<void>;
}

export interface EmbeddedBackendOptions {
  /** The data directory: the embedded coordinates' (`${DEPLOY_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/k8s-deployer}/state` of the run's env). */
  readonly dataDir: string;
  /** The state key, e.g. `<group>-<target>`. */
  readonly key: string;
  /** Aborts the start only. A running server is NOT stopped by it: tofu, stopping on the
   * same signal, still needs it to save the state and release the lock; call close(). */
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
}

/**
 * Starts the state backend in this process on a loopback port with a fresh random password
 * (other local users cannot reach the state), for the state `key`.
 */
export async function startEmbeddedBackend(opts: EmbeddedBackendOptions): Promise<StateBackend> {
  const problem = checkStateKey(opts.key);
  if (problem) throw new DeployError(`state key: ${problem}`, ExitCode.usage);
  if (opts.signal?.aborted) {
    throw new InterruptedError(`interrupted before the state backend of ${opts.key} started: nothing of this target was changed`, { hint: 'run the command again' });
  }
  const { dataDir } = opts;
  let store: SqliteStateStore;
  try {
    store = SqliteStateStore.open(dataDir);
  } catch (err) {
    throw new ToolError(`the embedded state backend could not open its data in ${dataDir}: ${(err as Error).message}`, {
      hint: hintOf(err, 'check that the directory is writable (set DEPLOY_STATE_DIR to move it), or point TF_HTTP_ADDRESS at a shared state backend'),
      cause: err,
    });
  }
  const credentials = { username: 'deploy', password: randomBytes(24).toString('base64url') };
  let running;
  try {
    running = await startStateServer({ store, credentials, listen: { host: '127.0.0.1', port: 0, loopback: true }, logger: opts.logger });
  } catch (err) {
    await store.close();
    throw new ToolError(`the embedded state backend could not listen on 127.0.0.1: ${(err as Error).message}`, { cause: err });
  }
  const address = `${running.url}/${opts.key.split('/').map(encodeURIComponent).join('/')}`;
  opts.logger?.debug({ kind: 'state-backend-started', address, dataDir }, 'embedded state backend started');
  let closing: Promise<void> | undefined;
  const http = servedBackend(address, credentials);
  return {
    http,
    address,
    embedded: true,
    close: () =>
      (closing ??= running.close().finally(async () => {
        await store.close();
        opts.logger?.debug({ kind: 'state-backend-stopped', address }, 'embedded state backend stopped');
      })),
  };
}

/**
 * The backend for a run: the operator's http backend as its coordinates say (the state key is
 * then whatever that address names), its TF_HTTP_* for tofu built from them; otherwise the
 * embedded backend for `key`, with its data in the coordinates' data directory.
 */
export async function resolveBackend(
  backend: BackendCoordinates,
  key: string,
  opts: Partial<Omit<EmbeddedBackendOptions, 'key' | 'dataDir'>> = {},
): Promise<StateBackend> {
  if (backend.kind === 'http') {
    return { http: backend, address: backend.address, embedded: false, close: async () => {} };
  }
  return startEmbeddedBackend({ ...opts, key, dataDir: backend.dataDir });
}

import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openStore } from '../../src/state/store/open-store.js';
import type { HttpBackendCoordinates } from '../../src/config/backend-coordinates.js';
import { httpBackendEnv, servedBackend, startEmbeddedBackend } from '../../src/state/embedded.js';
import type { StateStore } from '../../src/state/store/store.js';
import { sharedPostgres } from '../support/postgres-server.js';
import { startServerProcess, type ServerProcess } from '../support/state-server.js';
import { tofuBackendVariables } from '../../src/config/backend-coordinates.js';

// The two stores of the state backend, for the tests that run against both: a SQLite data
// directory, or a fresh database on this file's PostgreSQL server (sharedPostgres(); stop it
// with stopSharedPostgres() in afterAll).

export type StoreKind = 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres'];

export interface StoreData {
  readonly kind: StoreKind;
  /** `deploy state serve --data <this>`: the directory, or the database URL without its password. */
  readonly data: string;
  /** The environment a server process needs besides: the database password's file. */
  readonly serveEnv: Record<string, string>;
  /** The store itself (as another server would open it): read it, or take a lock in it. */
  open(): Promise<StateStore>;
}

/** New, empty state data of `kind`; a SQLite directory goes under `root`. */
export async function newStoreData(kind: StoreKind, root: string, name: string): Promise<StoreData> {
  if (kind === 'sqlite') {
    const dir = join(root, `${name}-data`);
    return { kind, data: dir, serveEnv: {}, open: () => openStore({ kind: 'sqlite', dataDir: dir }) };
  }
  const db = await (await sharedPostgres()).createDatabase();
  const pwFile = join(root, `${name}-db-password`);
  await mkdir(root, { recursive: true });
  await writeFile(pwFile, `${db.password}\n`, { mode: 0o600 });
  const location = { kind: 'postgres' as const, connectionString: db.urlWithoutPassword, where: db.urlWithoutPassword, passwordFile: pwFile };
  return { kind, data: db.urlWithoutPassword, serveEnv: { DEPLOY_STATE_DATABASE_PASSWORD_FILE: pwFile }, open: () => openStore(location) };
}

/** Runs `fn` on a store of the data opened for it, and closes it. */
export async function withStore<T>(data: StoreData, fn: (s: StateStore) => Promise<T>): Promise<T> {
  const store = await data.open();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** What one run's tofu talks to: its TF_HTTP_* variables. */
export interface RunBackend {
  readonly env: Record<string, string>;
  readonly address: string;
  /** The same, typed: what the run's lock takes. */
  readonly http: HttpBackendCoordinates;
  /** The server process (postgres), to kill it. */
  readonly process?: ServerProcess;
  close(): Promise<void>;
}

/**
 * The backend a `deploy` run would use for `key`: on SQLite the embedded backend over the
 * data directory (what plan/apply start in-process); on PostgreSQL a `deploy state serve`
 * process over the database, with basic auth (the shared backend of a team).
 */
export async function startRunBackend(data: StoreData, key: string): Promise<RunBackend> {
  if (data.kind === 'sqlite') {
    const b = await startEmbeddedBackend({ dataDir: data.data, key });
    return { env: tofuBackendVariables(b.http), http: b.http, address: b.address, close: () => b.close() };
  }
  return startServedBackend(data, key);
}

/** A `deploy state serve` process over the data, with basic auth, and tofu's variables for `key`. */
export async function startServedBackend(data: StoreData, key: string): Promise<RunBackend> {
  const password = randomBytes(12).toString('base64url');
  const proc = await startServerProcess(data.data, { ...data.serveEnv, DEPLOY_STATE_USERNAME: 'ops', DEPLOY_STATE_PASSWORD: password });
  const address = `${proc.url}/${key}`;
  return {
    address,
    process: proc,
    env: httpBackendEnv(address, { username: 'ops', password }),
    http: servedBackend(address, { username: 'ops', password }),
    close: async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) await proc.stop();
    },
  };
}

/**
 * How `deploy state <verb>` reaches the data: `--data DIR` for SQLite; through a server
 * (TF_HTTP_ADDRESS, its base URL) for PostgreSQL.
 */
export function cliSource(data: StoreData, backend: RunBackend): { args: string[]; env: Record<string, string> } {
  if (data.kind === 'sqlite') return { args: ['--data', data.data], env: {} };
  return { args: [], env: { TF_HTTP_ADDRESS: new URL(backend.address).origin, TF_HTTP_USERNAME: backend.env.TF_HTTP_USERNAME!, TF_HTTP_PASSWORD: backend.env.TF_HTTP_PASSWORD! } };
}

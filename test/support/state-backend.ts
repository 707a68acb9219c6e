import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Credentials } from '../../src/state/server/credentials.js';
import { PostgresStateStore } from '../../src/state/store/postgres-store.js';
import { startStateServer, type RunningStateServer } from '../../src/state/server/server.js';
import { SqliteStateStore } from '../../src/state/store/sqlite-store.js';
import type { StateStore } from '../../src/state/store/store.js';
import { sharedPostgres } from './postgres-server.js';

/** Which store a test backend keeps its states in. */
export type StoreKind = 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres'];

/** A real state server on a loopback port over a fresh data directory or a fresh PostgreSQL database. */
export interface TestBackend {
  readonly url: string;
  readonly kind: StoreKind;
  /** The data directory (sqlite) or the database URL (postgres). */
  readonly data: string;
  readonly store: StateStore;
  readonly server: RunningStateServer;
  /** Another store on the same data (as another process or server would open it). */
  openAnother(): Promise<StateStore>;
  stop(): Promise<void>;
}

async function openStore(kind: StoreKind, data: string): Promise<StateStore> {
  return kind === 'sqlite' ? SqliteStateStore.open(data) : PostgresStateStore.open({ connectionString: data, where: data.replace(/:[^:@/]*@/, '@') });
}

export async function startTestBackend(
  opts: { kind?: StoreKind; credentials?: Credentials; maxBodyBytes?: number; dataDir?: string } = {},
): Promise<TestBackend> {
  const kind = opts.kind ?? 'sqlite';
  const ownDir = kind === 'sqlite' && !opts.dataDir;
  const data = kind === 'postgres' ? (await (await sharedPostgres()).createDatabase()).url : (opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'deploy-state-'))));
  const store = await openStore(kind, data);
  const server = await startStateServer({
    store,
    credentials: opts.credentials,
    maxBodyBytes: opts.maxBodyBytes,
    listen: { host: '127.0.0.1', port: 0, loopback: true },
  });
  return {
    url: server.url,
    kind,
    data,
    store,
    server,
    openAnother: () => openStore(kind, data),
    async stop() {
      await server.close();
      await store.close();
      if (ownDir) await rm(data, { recursive: true, force: true });
    },
  };
}

/** A state document as tofu writes it (format 4). */
export function stateDoc(serial: number, lineage: string, opts: { resources?: number; pad?: number; outputs?: Record<string, unknown> } = {}): Buffer {
  const resources = Array.from({ length: opts.resources ?? 1 }, (_, i) => ({
    mode: 'managed',
    type: 'null_resource',
    name: `r${i}`,
    provider: 'provider["registry.opentofu.org/hashicorp/null"]',
    instances: [{ schema_version: 0, attributes: { id: String(1000 + i), triggers: null }, sensitive_attributes: [] }],
  }));
  const doc = {
    version: 4,
    terraform_version: '1.12.6',
    serial,
    lineage,
    outputs: opts.outputs ?? {},
    resources,
    check_results: null,
    ...(opts.pad ? { padding: 'x'.repeat(opts.pad) } : {}),
  };
  return Buffer.from(JSON.stringify(doc, null, 2));
}

export function lockInfo(over: Partial<Record<string, string>> = {}) {
  return {
    ID: randomUUID(),
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'alice@host-a',
    Version: '1.12.6',
    Created: new Date().toISOString(),
    Path: '',
    ...over,
  };
}

export function md5(body: Buffer): string {
  return createHash('md5').update(body).digest('base64');
}

/** One request; returns the status, headers and text body. */
export async function call(
  url: string,
  method: string,
  body?: Buffer | string | object,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: () => any; headers: Headers }> {
  const data = body === undefined ? undefined : Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(url, { method, body: data, headers, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text), headers: res.headers };
}

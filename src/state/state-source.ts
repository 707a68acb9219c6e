import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, DeployError, ExitCode, ToolError } from '../errors.js';
import type { LockInfo } from './lock-info.js';
import { ADMIN_PREFIX } from './server.js';
import { checkStateKey } from './state-key.js';
import { DATABASE_FILE, SqliteStateStore } from './sqlite-store.js';
import type { StateSummary, VersionMeta } from './store.js';

/** Where the operator verbs (`deploy state list|versions|show|unlock`) read and unlock. */
export interface StateSource {
  /** For messages: the data directory or the backend's URL. */
  readonly where: string;
  list(): Promise<StateSummary[]>;
  versions(key: string): Promise<VersionMeta[]>;
  /** The bytes of the newest version (or of `serial`); undefined when there is none. */
  read(key: string | undefined, serial?: number): Promise<Buffer | undefined>;
  /** Releases the lock with this ID (on `key`, or wherever it is held); returns the key and the holder. */
  unlock(id: string, key?: string): Promise<{ key: string; holder: LockInfo | undefined }>;
  close(): void;
}

/**
 * Reads the database in a data directory directly (works while a server uses it: WAL).
 * Creates nothing: a directory without a database lists no states.
 */
export class DataDirSource implements StateSource {
  readonly where: string;
  private readonly opened: SqliteStateStore | undefined;
  constructor(dataDir: string) {
    this.where = dataDir;
    if (!existsSync(join(dataDir, DATABASE_FILE))) return;
    try {
      this.opened = SqliteStateStore.open(dataDir);
    } catch (err) {
      throw new ToolError(`cannot open the state data in ${dataDir}: ${(err as Error).message}`, { cause: err });
    }
  }
  private get store(): SqliteStateStore {
    if (!this.opened) {
      throw new DeployError(`no state data in ${this.where} (no ${DATABASE_FILE})`, ExitCode.usage, {
        hint: 'pass --data DIR, set DEPLOY_STATE_DIR, or set TF_HTTP_ADDRESS to use a shared backend',
      });
    }
    return this.opened;
  }
  async list() {
    return this.opened ? this.opened.list() : [];
  }
  async versions(key: string) {
    requireKey(key);
    return this.store.versions(key);
  }
  async read(key: string | undefined, serial?: number) {
    requireKey(key);
    return (await this.store.read(key!, serial))?.body;
  }
  async unlock(id: string, key?: string) {
    const held = key ? [{ key, info: await this.store.lockOf(key) }] : await this.store.findLock(id);
    const match = held.find((h) => h.info?.ID === id);
    if (!match) throw noSuchLock(id, this.where, key, held[0]?.info);
    const result = await this.store.unlock(match.key, id);
    if (result.kind === 'held') throw noSuchLock(id, this.where, match.key, result.holder);
    return { key: match.key, holder: result.kind === 'released' ? result.holder : undefined };
  }
  close() {
    // synchronous for SQLite: done when this returns
    void this.opened?.close();
  }
}

/** Wait at most this long for one answer of a remote backend. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Talks to the backend at TF_HTTP_ADDRESS (credentials TF_HTTP_USERNAME/PASSWORD, as tofu
 * does). As for `deploy plan|apply|destroy`, TF_HTTP_ADDRESS is a base address: the state
 * `<key>` is at `<base>/<key>` (TF_HTTP_UNLOCK_ADDRESS likewise, when set). `show` and
 * `unlock --key` work with any OpenTofu http backend; `list`, `versions` and finding a lock
 * by its ID alone need `deploy state serve` (its read-only /_deploy/v1/ routes).
 */
export class HttpSource implements StateSource {
  readonly where: string;
  private readonly origin: string;
  private readonly base: string;
  /** The base address's path, i.e. the key prefix on a `deploy state serve` backend. */
  private readonly prefix: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly signal: AbortSignal | undefined;
  constructor(env: NodeJS.ProcessEnv, signal?: AbortSignal) {
    this.env = env;
    this.signal = signal;
    const url = parseAddress('TF_HTTP_ADDRESS', env.TF_HTTP_ADDRESS!);
    this.origin = url.origin;
    this.base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.prefix = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ''));
    this.where = this.base;
    if (env.TF_HTTP_UNLOCK_ADDRESS) parseAddress('TF_HTTP_UNLOCK_ADDRESS', env.TF_HTTP_UNLOCK_ADDRESS);
  }

  /** The key a `deploy state serve` backend files `<base>/<key>` under. */
  private serverKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async list() {
    const all = (await this.admin('states')) as StateSummary[];
    if (!this.prefix) return all;
    const under = `${this.prefix}/`;
    return all.filter((s) => s.key.startsWith(under)).map((s) => ({ ...s, key: s.key.slice(under.length) }));
  }
  async versions(key: string) {
    requireKey(key);
    const versions = (await this.admin(`versions/${encodeKey(this.serverKey(key))}`)) as VersionMeta[];
    return versions.map((v) => ({ ...v, key }));
  }
  async read(key: string | undefined, serial?: number) {
    requireKey(key);
    const url = new URL(stateAddress(this.base, key));
    if (serial !== undefined) url.searchParams.set('serial', String(serial));
    const res = await this.request('GET', url);
    if (res.status === 404 || res.status === 204) return undefined;
    if (res.status !== 200) throw await httpFailure('GET', url, res);
    return Buffer.from(await res.arrayBuffer());
  }
  async unlock(id: string, key?: string) {
    let target: URL;
    let shownKey: string;
    if (key) {
      requireKey(key);
      const unlockBase = this.env.TF_HTTP_UNLOCK_ADDRESS ? this.env.TF_HTTP_UNLOCK_ADDRESS.replace(/\/+$/, '') : this.base;
      target = new URL(stateAddress(unlockBase, key));
      shownKey = key;
    } else {
      // find the key by the lock ID (a `deploy state serve` backend only)
      const found = await this.admin(`locks/${encodeURIComponent(id)}`).then(
        (v) => v as { key: string }[],
        () => undefined,
      );
      if (!found) {
        throw new ConfigError(`${this.origin} cannot look a lock up by its ID (it is not a \`deploy state serve\` backend)`, [
          { where: '--key', message: 'name the state the lock is on: deploy state unlock <ID> --key <key>' },
        ]);
      }
      if (found.length === 0) throw noSuchLock(id, this.where, undefined, undefined);
      target = new URL(`${this.origin}/${encodeKey(found[0]!.key)}`);
      shownKey = this.prefix && found[0]!.key.startsWith(`${this.prefix}/`) ? found[0]!.key.slice(this.prefix.length + 1) : found[0]!.key;
    }
    const method = this.env.TF_HTTP_UNLOCK_METHOD || 'UNLOCK';
    const res = await this.request(method, target, JSON.stringify({ ID: id }));
    const text = await res.text();
    if (res.status === 423 || res.status === 409) {
      let holder: LockInfo | undefined;
      try {
        holder = JSON.parse(text) as LockInfo;
      } catch {
        holder = undefined;
      }
      throw noSuchLock(id, this.where, shownKey, holder?.ID ? holder : undefined);
    }
    if (res.status !== 200) throw await httpFailure(method, target, res, text);
    let holder: LockInfo | undefined;
    try {
      const body = JSON.parse(text) as LockInfo;
      holder = body.Who || body.Created ? body : undefined;
    } catch {
      holder = undefined;
    }
    return { key: shownKey, holder };
  }
  close() {}

  private async admin(route: string): Promise<unknown> {
    const url = new URL(`${this.origin}${ADMIN_PREFIX}${route}`);
    const res = await this.request('GET', url);
    if (res.status !== 200) {
      if (res.status === 404 || res.status === 400 || res.status === 405) {
        throw new ToolError(`${this.origin} does not list states: it is not a \`deploy state serve\` backend (${res.status})`, {
          hint: 'use `deploy state show` (works with any http backend), or run list/versions where the data directory is (--data DIR)',
        });
      }
      throw await httpFailure('GET', url, res);
    }
    return res.json();
  }

  private async request(method: string, url: URL, body?: string): Promise<Response> {
    const headers: Record<string, string> = {};
    const user = this.env.TF_HTTP_USERNAME;
    if (user) headers.Authorization = `Basic ${Buffer.from(`${user}:${this.env.TF_HTTP_PASSWORD ?? ''}`).toString('base64')}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const signals = [AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(this.signal ? [this.signal] : [])];
    try {
      return await fetch(url, { method, headers, body, signal: AbortSignal.any(signals), redirect: 'error' });
    } catch (err) {
      throw new ToolError(`${method} ${url.origin}${url.pathname} failed: ${(err as Error).message}`, {
        hint: 'check TF_HTTP_ADDRESS and that the state backend is running',
        cause: err,
      });
    }
  }
}

/** `<base>/<key>`, the key encoded as `deploy plan|apply|destroy` encode it. */
function stateAddress(base: string, key: string): string {
  return `${base.replace(/\/+$/, '')}/${encodeURIComponent(key)}`;
}

function parseAddress(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL`, [{ where: name, message: 'expected http(s)://host:port[/base]' }]);
  }
  if (url.username || url.password) {
    throw new ConfigError(`${name} carries credentials`, [
      { where: name, message: 'put credentials in TF_HTTP_USERNAME and TF_HTTP_PASSWORD, never in the URL' },
    ]);
  }
  return url;
}

function requireKey(key: string | undefined): asserts key is string {
  const problem = key === undefined ? 'a state key is needed (see `deploy state list`)' : checkStateKey(key);
  if (problem) throw new ConfigError('bad state key', [{ where: '<key>', message: problem }]);
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

function noSuchLock(id: string, where: string, key: string | undefined, holder: LockInfo | undefined): DeployError {
  const held = holder ? `; "${key}" is locked by ID ${holder.ID}${holder.Who ? ` (${holder.Who}, since ${holder.Created})` : ''}` : '';
  return new DeployError(`no lock with ID ${id}${key ? ` on "${key}"` : ''} in ${where}${held}`, ExitCode.usage, {
    hint: '`deploy state list` shows every held lock with its ID',
  });
}

async function httpFailure(method: string, url: URL, res: Response, text?: string): Promise<ToolError> {
  const body = text ?? (await res.text().catch(() => ''));
  return new ToolError(`${method} ${url.origin}${url.pathname} answered ${res.status}: ${body.slice(0, 300)}`);
}

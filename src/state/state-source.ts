import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, DeployError, ExitCode, hintOf, ToolError } from '../errors.js';
import { stateAddress } from '../contract/state-address.js';
import { backendRequest, httpFailure, type LockAnswer, requestLock, requestUnlock } from './http-client.js';
import type { LockInfo } from './lock-info.js';
import { defaultStateDataDir } from './paths.js';
import { ADMIN_PREFIX } from './server.js';
import { parseStateHeader } from './state-document.js';
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
  /** Who holds the lock of `key`, if anyone. */
  lockOf(key: string): Promise<LockInfo | undefined>;
  /** Takes the lock of `key` with `info` (a 'held' answer names the holder when it can). */
  lock(key: string, info: LockInfo): Promise<LockAnswer>;
  /** Stores `body` as the next version of `key` under the lock `lockId`; a refusal throws. */
  write(key: string, body: Buffer, lockId: string): Promise<void>;
  /** Releases the lock with this ID (on `key`, or wherever it is held); returns the key and the holder. */
  unlock(id: string, key?: string): Promise<{ key: string; holder: LockInfo | undefined }>;
  close(): void;
}

/** Where plan/apply/destroy keep the states: TF_HTTP_ADDRESS when set, else the embedded backend's data directory. */
export function openStateSource(env: NodeJS.ProcessEnv, signal?: AbortSignal): StateSource {
  return env.TF_HTTP_ADDRESS ? HttpSource.fromEnv(env, signal) : new DataDirSource(defaultStateDataDir(env));
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
      throw new ToolError(`cannot open the state data in ${dataDir}: ${(err as Error).message}`, { hint: hintOf(err), cause: err });
    }
  }
  /** False for a directory without a database: a machine that never kept a state there. */
  get hasData(): boolean {
    return this.opened !== undefined;
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
  async lockOf(key: string) {
    requireKey(key);
    return this.opened ? this.opened.lockOf(key) : undefined;
  }
  async lock(key: string, info: LockInfo): Promise<LockAnswer> {
    requireKey(key);
    const result = await this.store.lock(key, info);
    return result.kind === 'held' ? { kind: 'held', holder: result.holder } : { kind: 'acquired' };
  }
  async write(key: string, body: Buffer, lockId: string) {
    requireKey(key);
    const parsed = parseStateHeader(body);
    if (!parsed.ok) throw new ToolError(`cannot store "${key}" in ${this.where}: ${parsed.problem}`);
    const result = await this.store.update(key, body, parsed.header, lockId);
    if (result.kind === 'refused') throw new ToolError(`${this.where} refused "${key}": ${result.reason}`);
    if (result.kind === 'lock-mismatch') throw new ToolError(`${this.where} refused "${key}": lock ${lockId} is not the one held`);
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

/** Where a remote backend is and how to reach it. */
export interface HttpSourceOptions {
  /** The base address: the state `<key>` is at `<base>/<key>`. */
  readonly address: string;
  /** What the address was given as, for messages: `TF_HTTP_ADDRESS`, `--to`, `--from`. */
  readonly addressName: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** A base address for LOCK other than `address` (TF_HTTP_LOCK_ADDRESS). */
  readonly lockAddress?: string | undefined;
  /** @default 'LOCK' */
  readonly lockMethod?: string | undefined;
  /** A base address for UNLOCK other than `address` (TF_HTTP_UNLOCK_ADDRESS). */
  readonly unlockAddress?: string | undefined;
  /** @default 'UNLOCK' */
  readonly unlockMethod?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Talks to a remote backend at a base address. As for `deploy plan|apply|destroy`, the state
 * `<key>` is at `<base>/<key>` (TF_HTTP_UNLOCK_ADDRESS likewise, when set). `show`, `lock`,
 * `write` and `unlock --key` work with any OpenTofu http backend; `list`, `versions` and
 * finding a lock by its ID alone need `deploy state serve` (its read-only /_deploy/v1/ routes).
 */
export class HttpSource implements StateSource {
  readonly where: string;
  private readonly origin: string;
  private readonly base: string;
  /** The base address's path, i.e. the key prefix on a `deploy state serve` backend. */
  private readonly prefix: string;
  private readonly opts: HttpSourceOptions;

  /** The backend of TF_HTTP_ADDRESS, with tofu's credentials and unlock settings. */
  static fromEnv(env: NodeJS.ProcessEnv, signal?: AbortSignal): HttpSource {
    if (env.TF_HTTP_LOCK_ADDRESS) parseAddress('TF_HTTP_LOCK_ADDRESS', env.TF_HTTP_LOCK_ADDRESS);
    if (env.TF_HTTP_UNLOCK_ADDRESS) parseAddress('TF_HTTP_UNLOCK_ADDRESS', env.TF_HTTP_UNLOCK_ADDRESS);
    return new HttpSource({
      address: env.TF_HTTP_ADDRESS!,
      addressName: 'TF_HTTP_ADDRESS',
      username: env.TF_HTTP_USERNAME,
      password: env.TF_HTTP_PASSWORD,
      lockAddress: env.TF_HTTP_LOCK_ADDRESS || undefined,
      lockMethod: env.TF_HTTP_LOCK_METHOD || undefined,
      unlockAddress: env.TF_HTTP_UNLOCK_ADDRESS || undefined,
      unlockMethod: env.TF_HTTP_UNLOCK_METHOD || undefined,
      signal,
    });
  }

  constructor(opts: HttpSourceOptions) {
    this.opts = opts;
    const url = parseAddress(opts.addressName, opts.address);
    this.origin = url.origin;
    this.base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.prefix = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ''));
    this.where = this.base;
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
  /**
   * From the state list of a `deploy state serve` backend; from any other backend by the
   * protocol itself: a LOCK with a new ID answers 423 with the holder, or is granted when the
   * state is free (then released at once).
   */
  async lockOf(key: string) {
    requireKey(key);
    const listed = await this.list().then(
      (all) => ({ lock: all.find((s) => s.key === key)?.lock }),
      () => undefined,
    );
    if (listed) return listed.lock;
    const probe: LockInfo = { ID: randomUUID(), Operation: 'deploy state unlock (reading the holder)', Who: 'deploy state unlock', Created: new Date().toISOString() };
    const answer = await this.lock(key, probe);
    if (answer.kind === 'held') return answer.holder ?? { ID: '(unknown)', Info: 'the backend did not say who holds it' };
    await this.unlock(probe.ID, key);
    return undefined;
  }
  async lock(key: string, info: LockInfo) {
    requireKey(key);
    const lockBase = this.opts.lockAddress ? this.opts.lockAddress.replace(/\/+$/, '') : this.base;
    return requestLock(new URL(stateAddress(lockBase, key)), this.opts.lockMethod || 'LOCK', info, this.auth());
  }
  async write(key: string, body: Buffer, lockId: string) {
    requireKey(key);
    const url = new URL(stateAddress(this.base, key));
    url.searchParams.set('ID', lockId);
    const res = await this.request('POST', url, body);
    if (res.status !== 200 && res.status !== 201 && res.status !== 204) throw await httpFailure('POST', url, res);
  }
  async unlock(id: string, key?: string) {
    let target: URL;
    let shownKey: string;
    if (key) {
      requireKey(key);
      const unlockBase = this.opts.unlockAddress ? this.opts.unlockAddress.replace(/\/+$/, '') : this.base;
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
    const answer = await requestUnlock(target, this.opts.unlockMethod || 'UNLOCK', { ID: id }, this.auth());
    if (answer.kind === 'held') throw noSuchLock(id, this.where, shownKey, answer.holder);
    return { key: shownKey, holder: answer.holder };
  }
  close() {}

  private auth() {
    return { username: this.opts.username, password: this.opts.password, signal: this.opts.signal };
  }

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

  private request(method: string, url: URL, body?: Buffer): Promise<Response> {
    return backendRequest(method, url, { ...this.auth(), body });
  }
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

import { randomUUID } from 'node:crypto';
import type { HttpBackendCoordinates } from '../../config/backend-coordinates.js';
import { stateAddress } from '../../contract/graph/state-address.js';
import { ConfigError, ToolError } from '../../errors.js';
import { backendRequest, CLEANUP_TIMEOUT_MS, httpFailure, type LockAnswer, requestLock, requestUnlock } from './http-client.js';
import { shq } from '../../contract/shell.js';
import { noSuchLock, type LockInfo } from '../lock-info.js';
import { ADMIN_PREFIX } from '../server/server.js';
import type { StateSource } from './state-source.js';
import { requireStateKey } from '../state-key.js';
import type { StateSummary, VersionMeta } from '../store/store.js';

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
  private readonly opts: HttpBackendCoordinates;
  private readonly signal: AbortSignal | undefined;

  /** `signal` stops the reads (never a write or an unlock: they take their own deadline). */
  constructor(backend: HttpBackendCoordinates, signal?: AbortSignal) {
    this.opts = backend;
    this.signal = signal;
    const url = backend.url;
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
    requireStateKey(key);
    const versions = (await this.admin(`versions/${encodeKey(this.serverKey(key))}`)) as VersionMeta[];
    return versions.map((v) => ({ ...v, key }));
  }
  async read(key: string | undefined, serial?: number) {
    requireStateKey(key);
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
    requireStateKey(key);
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
    requireStateKey(key);
    const lockBase = this.opts.lockAddress ? this.opts.lockAddress.replace(/\/+$/, '') : this.base;
    return requestLock(new URL(stateAddress(lockBase, key)), this.opts.lockMethod || 'LOCK', info, this.auth());
  }
  /** Saves a state: never aborted by the run's signal (an interrupted run still saves), its own deadline. */
  async write(key: string, body: Buffer, lockId: string) {
    requireStateKey(key);
    const url = new URL(stateAddress(this.base, key));
    url.searchParams.set('ID', lockId);
    const res = await backendRequest('POST', url, { username: this.opts.username, password: this.opts.password, body, timeoutMs: CLEANUP_TIMEOUT_MS });
    if (res.status !== 200 && res.status !== 201 && res.status !== 204) throw await httpFailure('POST', url, res);
  }
  async unlock(id: string, key?: string) {
    let target: URL;
    let shownKey: string;
    if (key) {
      requireStateKey(key);
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
  operatorCommand(args: string): string {
    const unlockAddress = this.opts.unlockAddress ? ` TF_HTTP_UNLOCK_ADDRESS=${shq(this.opts.unlockAddress)}` : '';
    return `TF_HTTP_ADDRESS=${shq(this.base)}${unlockAddress} deploy state ${args}`;
  }
  close() {}

  private auth() {
    return { username: this.opts.username, password: this.opts.password, signal: this.signal };
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

  /** A read: the run's signal stops it. */
  private request(method: string, url: URL): Promise<Response> {
    return backendRequest(method, url, this.auth());
  }
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

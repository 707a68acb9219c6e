import { existsSync } from 'node:fs';
import { shq } from '../../contract/shell.js';
import { join } from 'node:path';
import { DeployError, ExitCode, hintOf, ToolError } from '../../errors.js';
import type { LockAnswer } from './http-client.js';
import { noSuchLock, type LockInfo } from '../lock-info.js';
import { DATABASE_FILE, SqliteStateStore } from '../store/sqlite-store.js';
import { parseStateHeader } from '../state-document.js';
import type { StateSource } from './state-source.js';
import { requireStateKey } from '../state-key.js';

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
    requireStateKey(key);
    return this.store.versions(key);
  }
  async read(key: string | undefined, serial?: number) {
    requireStateKey(key);
    return (await this.store.read(key!, serial))?.body;
  }
  async lockOf(key: string) {
    requireStateKey(key);
    return this.opened ? this.opened.lockOf(key) : undefined;
  }
  async lock(key: string, info: LockInfo): Promise<LockAnswer> {
    requireStateKey(key);
    const result = await this.store.lock(key, info);
    return result.kind === 'held' ? { kind: 'held', holder: result.holder } : { kind: 'acquired' };
  }
  async write(key: string, body: Buffer, lockId: string) {
    requireStateKey(key);
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
  operatorCommand(args: string): string {
    return `deploy state ${args} --data ${shq(this.where)}`;
  }
  close() {
    // synchronous for SQLite: done when this returns
    void this.opened?.close();
  }
}

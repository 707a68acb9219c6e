import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { LockInfo } from './lock-info.js';
import { loadSqlite } from './sqlite.js';
import type { StateHeader } from './state-document.js';
import { decideUpdate } from './update-rules.js';

/** One stored version of a state, without its bytes. */
export interface VersionMeta {
  readonly key: string;
  readonly serial: number;
  readonly lineage: string;
  readonly empty: boolean;
  readonly sha256: string;
  readonly size: number;
  /** ISO time the backend stored it. */
  readonly created: string;
}

export interface StoredState extends VersionMeta {
  readonly body: Buffer;
}

export interface StateSummary {
  readonly key: string;
  readonly latest: VersionMeta | undefined;
  readonly versions: number;
  readonly lock: LockInfo | undefined;
}

export type UpdateResult =
  | { kind: 'stored'; version: VersionMeta }
  | { kind: 'identical'; version: VersionMeta }
  | { kind: 'refused'; reason: string }
  /** Locked by someone else, or `?ID=` names no lock that is held. */
  | { kind: 'lock-mismatch'; holder: LockInfo | undefined };

export type LockResult = { kind: 'acquired' } | { kind: 'already-held-by-you' } | { kind: 'held'; holder: LockInfo };
export type UnlockResult = { kind: 'released'; holder: LockInfo } | { kind: 'was-free' } | { kind: 'held'; holder: LockInfo };

/** The file inside the data directory. */
export const DATABASE_FILE = 'state.db';
const SCHEMA_VERSION = 1;
/** How long a write waits for another process holding the database (then a 503). */
const BUSY_TIMEOUT_MS = 5_000;

export function sha256Hex(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * Every version of every state, and the locks, in one SQLite database (Node's built-in
 * `node:sqlite`): WAL with `synchronous=FULL`, so a commit is on disk before the backend
 * answers, and a crash leaves the previous or the new version, never a torn one
 * (https://www.sqlite.org/wal.html, https://www.sqlite.org/pragma.html#pragma_synchronous).
 * Locks live in the database too, so several processes serving the same data directory
 * (two `deploy apply` runs, each with its embedded backend) exclude each other. Locks never
 * expire; only UNLOCK with the holder's ID (or `deploy state unlock`) releases them.
 */
export class StateStore {
  readonly file: string;
  private readonly db: DatabaseSync;
  private readonly stmts: Record<string, StatementSync>;
  private closed = false;

  private constructor(file: string, db: DatabaseSync) {
    this.file = file;
    this.db = db;
    const prepare = (sql: string) => db.prepare(sql);
    this.stmts = {
      latest: prepare(
        'SELECT key, serial, lineage, empty, sha256, size, created FROM versions WHERE key = ? ORDER BY id DESC LIMIT 1',
      ),
      latestBody: prepare(
        'SELECT key, serial, lineage, empty, sha256, size, created, body FROM versions WHERE key = ? ORDER BY id DESC LIMIT 1',
      ),
      bySerial: prepare(
        'SELECT key, serial, lineage, empty, sha256, size, created, body FROM versions WHERE key = ? AND serial = ? ORDER BY id DESC LIMIT 1',
      ),
      insert: prepare(
        'INSERT INTO versions (key, serial, lineage, empty, sha256, size, created, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      versions: prepare('SELECT key, serial, lineage, empty, sha256, size, created FROM versions WHERE key = ? ORDER BY id'),
      keys: prepare('SELECT key, COUNT(*) AS n FROM versions GROUP BY key'),
      lockKeys: prepare('SELECT key FROM locks'),
      getLock: prepare('SELECT info FROM locks WHERE key = ?'),
      lockById: prepare('SELECT key, info FROM locks WHERE id = ?'),
      putLock: prepare('INSERT INTO locks (key, id, info, created) VALUES (?, ?, ?, ?)'),
      deleteLock: prepare('DELETE FROM locks WHERE key = ? AND id = ?'),
    };
  }

  /** Opens (creating when missing) the database in `dataDir`, private to the user. */
  static open(dataDir: string): StateStore {
    const { DatabaseSync } = loadSqlite();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, DATABASE_FILE);
    const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
    try {
      // 16 KiB pages: a 1 MB state is 64 page writes instead of 256, while a lock is still a
      // small write (only takes effect on a new database, before WAL is switched on:
      // https://www.sqlite.org/pragma.html#pragma_page_size)
      db.exec('PRAGMA page_size = 16384');
      db.exec('PRAGMA journal_mode = WAL');
      // checkpoint every ~4 MB of WAL (the default is 1000 pages, ~16 MB at this page size)
      db.exec('PRAGMA wal_autocheckpoint = 256');
      db.exec('PRAGMA synchronous = FULL');
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      const row = db.prepare('PRAGMA user_version').get() as { user_version: number };
      if (row.user_version > SCHEMA_VERSION) {
        throw new Error(`${file} has schema version ${row.user_version}, newer than this deploy understands (${SCHEMA_VERSION})`);
      }
      if (row.user_version < SCHEMA_VERSION) {
        db.exec('BEGIN IMMEDIATE');
        try {
          db.exec(`
            CREATE TABLE IF NOT EXISTS versions (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              key TEXT NOT NULL,
              serial INTEGER NOT NULL,
              lineage TEXT NOT NULL,
              empty INTEGER NOT NULL,
              sha256 TEXT NOT NULL,
              size INTEGER NOT NULL,
              created TEXT NOT NULL,
              body BLOB NOT NULL
            );
            CREATE INDEX IF NOT EXISTS versions_by_key ON versions (key, id);
            CREATE TABLE IF NOT EXISTS locks (
              key TEXT PRIMARY KEY,
              id TEXT NOT NULL,
              info TEXT NOT NULL,
              created TEXT NOT NULL
            );
            CREATE INDEX IF NOT EXISTS locks_by_id ON locks (id);
            PRAGMA user_version = ${SCHEMA_VERSION};
          `);
          db.exec('COMMIT');
        } catch (err) {
          db.exec('ROLLBACK');
          throw err;
        }
      }
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        try {
          chmodSync(f, 0o600);
        } catch {
          // the -wal/-shm files exist only while a connection is open
        }
      }
    } catch (err) {
      db.close();
      throw err;
    }
    return new StateStore(file, db);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  latest(key: string): VersionMeta | undefined {
    return toMeta(this.stmts.latest!.get(key));
  }

  /** The newest version, or the newest stored with `serial`. */
  read(key: string, serial?: number): StoredState | undefined {
    const row = serial === undefined ? this.stmts.latestBody!.get(key) : this.stmts.bySerial!.get(key, serial);
    const meta = toMeta(row);
    if (!meta) return undefined;
    const body = (row as { body: Uint8Array }).body;
    return { ...meta, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  }

  versions(key: string): VersionMeta[] {
    return this.stmts.versions!.all(key).map((r) => toMeta(r)!);
  }

  list(): StateSummary[] {
    const counts = new Map<string, number>();
    for (const r of this.stmts.keys!.all() as { key: string; n: number }[]) counts.set(r.key, r.n);
    for (const r of this.stmts.lockKeys!.all() as { key: string }[]) if (!counts.has(r.key)) counts.set(r.key, 0);
    return [...counts.keys()].sort().map((key) => ({
      key,
      latest: this.latest(key),
      versions: counts.get(key) ?? 0,
      lock: this.lockOf(key),
    }));
  }

  lockOf(key: string): LockInfo | undefined {
    const row = this.stmts.getLock!.get(key) as { info: string } | undefined;
    return row ? (JSON.parse(row.info) as LockInfo) : undefined;
  }

  /** The keys whose lock has this ID (lock IDs are UUIDs: at most one, in practice). */
  findLock(id: string): { key: string; info: LockInfo }[] {
    return (this.stmts.lockById!.all(id) as { key: string; info: string }[]).map((r) => ({
      key: r.key,
      info: JSON.parse(r.info) as LockInfo,
    }));
  }

  /**
   * Stores `body` as the next version of `key` if the update rules allow it and the caller
   * holds the lock (`lockId`) when there is one. One write transaction: the check and the
   * insert cannot interleave with another process's.
   */
  update(key: string, body: Buffer, header: StateHeader, lockId: string | undefined): UpdateResult {
    return this.transaction((): UpdateResult => {
      const holder = this.lockOf(key);
      if (holder ? holder.ID !== lockId : lockId !== undefined) return { kind: 'lock-mismatch', holder };
      const current = this.latest(key);
      const sha256 = sha256Hex(body);
      const decision = decideUpdate(current && { header: current, sha256: current.sha256 }, header, sha256);
      if (decision.kind === 'refuse') return { kind: 'refused', reason: decision.reason };
      if (decision.kind === 'identical') return { kind: 'identical', version: current! };
      const version: VersionMeta = {
        key,
        serial: header.serial,
        lineage: header.lineage,
        empty: header.empty,
        sha256,
        size: body.length,
        created: new Date().toISOString(),
      };
      this.stmts.insert!.run(key, version.serial, version.lineage, version.empty ? 1 : 0, sha256, body.length, version.created, body);
      return { kind: 'stored', version };
    });
  }

  lock(key: string, info: LockInfo): LockResult {
    return this.transaction((): LockResult => {
      const holder = this.lockOf(key);
      if (!holder) {
        this.stmts.putLock!.run(key, info.ID, JSON.stringify(info), new Date().toISOString());
        return { kind: 'acquired' };
      }
      // a retried LOCK (its answer was lost) must not fail as "locked by itself"
      if (holder.ID === info.ID) return { kind: 'already-held-by-you' };
      return { kind: 'held', holder };
    });
  }

  unlock(key: string, id: string): UnlockResult {
    return this.transaction((): UnlockResult => {
      const holder = this.lockOf(key);
      if (!holder) return { kind: 'was-free' };
      if (holder.ID !== id) return { kind: 'held', holder };
      this.stmts.deleteLock!.run(key, id);
      return { kind: 'released', holder };
    });
  }

  private transaction<T>(fn: () => T): T {
    // IMMEDIATE takes the write lock first, so the read-check-write below is atomic across
    // processes too (https://www.sqlite.org/lang_transaction.html)
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // a failed statement or COMMIT may already have ended the transaction
      }
      throw err;
    }
  }
}

function toMeta(row: unknown): VersionMeta | undefined {
  if (!row) return undefined;
  const r = row as { key: string; serial: number; lineage: string; empty: number; sha256: string; size: number; created: string };
  return {
    key: r.key,
    serial: Number(r.serial),
    lineage: r.lineage,
    empty: Boolean(r.empty),
    sha256: r.sha256,
    size: Number(r.size),
    created: r.created,
  };
}

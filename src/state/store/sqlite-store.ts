import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { JudgedStateStore, type KeyWrite } from './judged-store.js';
import type { LockInfo } from '../lock-info.js';
import { loadSqlite } from './sqlite.js';
import { type StateStore, type StateSummary, type StoredState, StoreUnavailableError, type VersionMeta } from './store.js';
import { lockInfoOf, schemaStep, VERSION_COLUMNS as COLUMNS, versionMetaOf, type VersionRow } from './store-rows.js';

/** The file inside the data directory. */
export const DATABASE_FILE = 'state.db';
/** 1: versions and locks; 2: deletions (versions.deleted). */
const SCHEMA_VERSION = 2;
/** How long a write waits for another process holding the database (then a 503). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Every version of every state, and the locks, in one SQLite database (Node's built-in
 * `node:sqlite`): WAL with `synchronous=FULL`, so a commit is on disk before the backend
 * answers, and a crash leaves the previous or the new version, never a torn one
 * (https://www.sqlite.org/wal.html, https://www.sqlite.org/pragma.html#pragma_synchronous).
 * Locks live in the database too, so several processes serving the same data directory
 * (two `deploy apply` runs, each with its embedded backend) exclude each other. Locks never
 * expire; only UNLOCK with the holder's ID (or `deploy state unlock`) releases them.
 * The statements are synchronous: a transaction runs whole before any other request of this
 * process is served, and BEGIN IMMEDIATE excludes the other processes.
 */
export class SqliteStateStore extends JudgedStateStore implements StateStore {
  readonly where: string;
  readonly file: string;
  private readonly db: DatabaseSync;
  private readonly stmts: Record<string, StatementSync>;
  private closed = false;

  private constructor(dataDir: string, file: string, db: DatabaseSync) {
    super();
    this.where = dataDir;
    this.file = file;
    this.db = db;
    const prepare = (sql: string) => db.prepare(sql);
    this.stmts = {
      latest: prepare(`SELECT ${COLUMNS} FROM versions WHERE key = ? ORDER BY id DESC LIMIT 1`),
      latestBody: prepare(`SELECT ${COLUMNS}, body FROM versions WHERE key = ? ORDER BY id DESC LIMIT 1`),
      bySerial: prepare(`SELECT ${COLUMNS}, body FROM versions WHERE key = ? AND serial = ? AND deleted = 0 ORDER BY id DESC LIMIT 1`),
      insert: prepare(`INSERT INTO versions (${COLUMNS}, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      versions: prepare(`SELECT ${COLUMNS} FROM versions WHERE key = ? ORDER BY id`),
      keys: prepare('SELECT key, COUNT(*) AS n FROM versions GROUP BY key'),
      lockKeys: prepare('SELECT key FROM locks'),
      getLock: prepare('SELECT info FROM locks WHERE key = ?'),
      lockById: prepare('SELECT key, info FROM locks WHERE id = ?'),
      putLock: prepare('INSERT INTO locks (key, id, info, created) VALUES (?, ?, ?, ?)'),
      deleteLock: prepare('DELETE FROM locks WHERE key = ? AND id = ?'),
    };
  }

  /** Opens (creating when missing) the database in `dataDir`, private to the user. */
  static open(dataDir: string): SqliteStateStore {
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
      migrate(db, file);
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
    return new SqliteStateStore(dataDir, file, db);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  async latest(key: string): Promise<VersionMeta | undefined> {
    return this.guard(() => this.latestNow(key));
  }

  async read(key: string, serial?: number): Promise<StoredState | undefined> {
    return this.guard(() => {
      const row = serial === undefined ? this.stmts.latestBody!.get(key) : this.stmts.bySerial!.get(key, serial);
      const meta = toMeta(row);
      if (!meta || meta.deleted) return undefined;
      const body = (row as { body: Uint8Array }).body;
      return { ...meta, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
    });
  }

  async versions(key: string): Promise<VersionMeta[]> {
    return this.guard(() => this.stmts.versions!.all(key).map((r) => toMeta(r)!));
  }

  async list(): Promise<StateSummary[]> {
    return this.guard(() => {
      const counts = new Map<string, number>();
      for (const r of this.stmts.keys!.all() as { key: string; n: number }[]) counts.set(r.key, r.n);
      for (const r of this.stmts.lockKeys!.all() as { key: string }[]) if (!counts.has(r.key)) counts.set(r.key, 0);
      return [...counts.keys()].sort().map((key) => {
        const latest = this.latestNow(key);
        return { key, latest, deleted: latest?.deleted ?? false, versions: counts.get(key) ?? 0, lock: this.lockNow(key) };
      });
    });
  }

  async lockOf(key: string): Promise<LockInfo | undefined> {
    return this.guard(() => this.lockNow(key));
  }

  async findLock(id: string): Promise<{ key: string; info: LockInfo }[]> {
    return this.guard(() =>
      (this.stmts.lockById!.all(id) as { key: string; info: string }[]).map((r) => ({ key: r.key, info: lockInfoOf(r.info, r.key, this.file) })),
    );
  }

  // synchronous inside: the transaction runs whole before any other request of this process
  protected async writeKey<R>(key: string, write: KeyWrite<R>): Promise<R> {
    return this.transaction(() => {
      const w = write.judge({ lock: this.lockNow(key), latest: write.readsLatest ? this.latestNow(key) : undefined }, new Date());
      const v = w.insert?.version;
      if (v) this.stmts.insert!.run(v.key, v.serial, v.lineage, v.empty ? 1 : 0, v.deleted ? 1 : 0, v.sha256, v.size, v.created, w.insert!.body);
      if (w.putLock) this.stmts.putLock!.run(key, w.putLock.ID, JSON.stringify(w.putLock), new Date().toISOString());
      if (w.deleteLock !== undefined) this.stmts.deleteLock!.run(key, w.deleteLock);
      return w.result;
    });
  }

  private latestNow(key: string): VersionMeta | undefined {
    return toMeta(this.stmts.latest!.get(key));
  }

  private lockNow(key: string): LockInfo | undefined {
    const row = this.stmts.getLock!.get(key) as { info: string } | undefined;
    return row ? lockInfoOf(row.info, key, this.file) : undefined;
  }

  private transaction<T>(fn: () => T): T {
    return this.guard(() => {
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
    });
  }

  /** SQLITE_BUSY/SQLITE_LOCKED past the busy timeout: another process holds the database. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      const code = (err as { errcode?: number }).errcode;
      if (code === 5 || code === 6) {
        throw new StoreUnavailableError(`the state database ${this.file} is busy (another process holds it)`, { cause: err });
      }
      throw err;
    }
  }
}

/** Creates the tables of a new database, or brings an older one up to SCHEMA_VERSION. */
function migrate(db: DatabaseSync, file: string): void {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number };
  if (schemaStep(row.user_version, SCHEMA_VERSION, `${file} has`) === 'current') return;
  db.exec('BEGIN IMMEDIATE');
  try {
    // read again inside the write lock: another process may have migrated meanwhile
    const now = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (now < 1) {
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
      `);
    }
    if (now < 2) db.exec('ALTER TABLE versions ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0');
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

function toMeta(row: unknown): VersionMeta | undefined {
  return row ? versionMetaOf(row as VersionRow) : undefined;
}

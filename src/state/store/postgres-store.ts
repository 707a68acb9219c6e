import type { Pool, PoolClient, PoolConfig } from 'pg';
import type { Logger } from '../../log.js';
import { JudgedStateStore, type KeyWrite } from './judged-store.js';
import type { LockInfo } from '../lock-info.js';
import { type StateStore, type StateSummary, type StoredState, StoreUnavailableError, type VersionMeta } from './store.js';
import { lockInfoOf, schemaStep, VERSION_COLUMNS as COLUMNS, versionMetaOf as toMeta, type VersionRow } from './store-rows.js';

/** 1: versions (with deletions) and locks. */
const SCHEMA_VERSION = 1;
/**
 * The first key of every advisory lock this store takes (the second is the state key's
 * hash; 0 for the schema), so its locks cannot meet another application's on a shared database.
 * https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS
 */
export const LOCK_CLASS = 0x64706c79; // "dply"
/** System error codes of a connection that failed or broke. */
const NETWORK_ERROR = /^(ECONN|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)/;
/** The client's own words for a connection it lost, could not open in time, or no longer has. */
const CONNECTION_LOST = /Connection terminated|timeout exceeded when trying to connect|connection error|Cannot use a pool after calling end|Client was closed/i;

/**
 * Deadlines (law 2, docs/glossary.md). A request waits at most LOCK_WAIT_MS for another server's
 * transaction on the same key and CONNECT_MS for a connection; a statement runs at most
 * STATEMENT_MS; a transaction left idle by a frozen server is ended after IDLE_TX_MS, so it
 * cannot hold a key forever. Past any of them the client gets a 503 and tofu retries.
 */
const CONNECT_MS = 10_000;
const LOCK_WAIT_MS = 15_000;
const STATEMENT_MS = 30_000;
const IDLE_TX_MS = 30_000;
/** Connections per server: requests beyond it queue (within CONNECT_MS). */
const POOL_SIZE = 10;

export interface PostgresStoreOptions {
  /** A `postgres://` URL (libpq's PG* variables and ~/.pgpass fill what it leaves out). */
  readonly connectionString: string;
  /** The address without credentials, for messages and logs. */
  readonly where: string;
  readonly logger?: Logger | undefined;
  /** How long a request waits for another server's transaction on its key. @default LOCK_WAIT_MS */
  readonly lockWaitMs?: number | undefined;
}

/**
 * The states, their versions and the locks in PostgreSQL, so that several `deploy state
 * serve` processes on one database are one backend. Every read is a query (no cache); every
 * write (update, delete, lock, unlock) is one transaction that first takes a transaction-level
 * advisory lock on its key, so the check and the write of two servers never interleave, and
 * a server that dies mid-request leaves nothing: its connection closes, PostgreSQL rolls its
 * transaction back and drops its advisory lock. The lock records are rows, seen by every
 * server at once. Tables: deploy_state_versions, deploy_state_locks, deploy_state_schema.
 */
export class PostgresStateStore extends JudgedStateStore implements StateStore {
  readonly where: string;
  private readonly pool: Pool;
  private closing: Promise<void> | undefined;

  private constructor(where: string, pool: Pool) {
    super();
    this.where = where;
    this.pool = pool;
  }

  /** Connects, and creates (or checks) the tables. Throws when the database cannot be used. */
  static async open(opts: PostgresStoreOptions): Promise<PostgresStateStore> {
    // loaded only when PostgreSQL is used: the SQLite default starts without it
    const { default: pg } = await import('pg');
    const config: PoolConfig = {
      connectionString: opts.connectionString,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_MS,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      statement_timeout: STATEMENT_MS,
      lock_timeout: opts.lockWaitMs ?? LOCK_WAIT_MS,
      idle_in_transaction_session_timeout: IDLE_TX_MS,
      application_name: 'deploy-state-serve',
    };
    const pool = new pg.Pool(config);
    // an idle connection that breaks (the database restarted) is an event, not a crash:
    // the pool drops it and the next request opens a new one
    pool.on('error', (err) => opts.logger?.warn({ kind: 'state-database-connection-lost', where: opts.where, err: err.message }, 'a database connection was lost'));
    const store = new PostgresStateStore(opts.where, pool);
    try {
      await store.migrate();
    } catch (err) {
      await pool.end().catch(() => {});
      throw store.classify(err);
    }
    return store;
  }

  close(): Promise<void> {
    return (this.closing ??= this.pool.end());
  }

  async latest(key: string): Promise<VersionMeta | undefined> {
    return this.query(async (c) => latestOf(c, key));
  }

  async read(key: string, serial?: number): Promise<StoredState | undefined> {
    // bytea in text format (hex, decoded by the client): exact bytes. Not `binary: true`: the
    // client decodes a row by its connection's mode, and would make a UTF-8 string of them
    return this.query(async (c) => {
      const { rows } =
        serial === undefined
          ? await c.query<VersionRow & { body: Buffer }>(`SELECT ${COLUMNS}, body FROM deploy_state_versions WHERE key = $1 ORDER BY id DESC LIMIT 1`, [key])
          : await c.query<VersionRow & { body: Buffer }>(
              `SELECT ${COLUMNS}, body FROM deploy_state_versions WHERE key = $1 AND serial = $2 AND NOT deleted ORDER BY id DESC LIMIT 1`,
              [key, serial],
            );
      const row = rows[0];
      if (!row || row.deleted) return undefined;
      return { ...toMeta(row), body: row.body };
    });
  }

  async versions(key: string): Promise<VersionMeta[]> {
    return this.query(async (c) => (await c.query<VersionRow>(`SELECT ${COLUMNS} FROM deploy_state_versions WHERE key = $1 ORDER BY id`, [key])).rows.map(toMeta));
  }

  async list(): Promise<StateSummary[]> {
    // one statement, one snapshot: counts, newest versions and locks agree with each other
    const { rows } = await this.query((c) =>
      c.query<Partial<VersionRow> & { k: string; n: string | null; info: string | null }>(`
        SELECT k.key AS k, c.n, l.key, l.serial, l.lineage, l.empty, l.deleted, l.sha256, l.size, l.created, lk.info
        FROM (SELECT key FROM deploy_state_versions UNION SELECT key FROM deploy_state_locks) k
        LEFT JOIN (SELECT key, count(*) AS n FROM deploy_state_versions GROUP BY key) c ON c.key = k.key
        LEFT JOIN (SELECT DISTINCT ON (key) ${COLUMNS} FROM deploy_state_versions ORDER BY key, id DESC) l ON l.key = k.key
        LEFT JOIN deploy_state_locks lk ON lk.key = k.key`),
    );
    return rows
      .map((r) => {
        const latest = r.key ? toMeta(r as VersionRow) : undefined;
        return { key: r.k, latest, deleted: latest?.deleted ?? false, versions: Number(r.n ?? 0), lock: r.info ? lockInfoOf(r.info, r.k, this.where) : undefined };
      })
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)); // as SQLite's list: code-unit order, not the database's collation
  }

  async lockOf(key: string): Promise<LockInfo | undefined> {
    return this.query((c) => this.lockNow(c, key));
  }

  async findLock(id: string): Promise<{ key: string; info: LockInfo }[]> {
    return this.query(async (c) =>
      (await c.query<{ key: string; info: string }>('SELECT key, info FROM deploy_state_locks WHERE id = $1', [id])).rows.map((r) => ({
        key: r.key,
        info: lockInfoOf(r.info, r.key, this.where),
      })),
    );
  }

  protected writeKey<R>(key: string, write: KeyWrite<R>): Promise<R> {
    return this.transaction(key, async (c) => {
      const w = write.judge({ lock: await this.lockNow(c, key), latest: write.readsLatest ? await latestOf(c, key) : undefined }, new Date());
      const v = w.insert?.version;
      if (v) {
        await c.query(`INSERT INTO deploy_state_versions (${COLUMNS}, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
          v.key,
          v.serial,
          v.lineage,
          v.empty,
          v.deleted,
          v.sha256,
          v.size,
          v.created,
          w.insert!.body,
        ]);
      }
      if (w.putLock) await c.query('INSERT INTO deploy_state_locks (key, id, info, created) VALUES ($1, $2, $3, $4)', [key, w.putLock.ID, JSON.stringify(w.putLock), new Date()]);
      if (w.deleteLock !== undefined) await c.query('DELETE FROM deploy_state_locks WHERE key = $1 AND id = $2', [key, w.deleteLock]);
      return w.result;
    });
  }

  private async lockNow(c: PoolClient, key: string): Promise<LockInfo | undefined> {
    const row = (await c.query<{ info: string }>('SELECT info FROM deploy_state_locks WHERE key = $1', [key])).rows[0];
    return row ? lockInfoOf(row.info, key, this.where) : undefined;
  }

  /**
   * Creates the tables when they are missing. When they are there at this schema version
   * nothing else is run, so a server may use a role that can only read and write them (a DBA
   * created them, or a first start with the owner's role did).
   */
  private async migrate(): Promise<void> {
    await this.transactionOn('SELECT pg_advisory_xact_lock($1, 0)', [], async (c) => {
      const present = (await c.query<{ t: string | null }>("SELECT to_regclass('deploy_state_schema') AS t")).rows[0]!.t !== null;
      const version = present ? (await c.query<{ version: number }>('SELECT version FROM deploy_state_schema')).rows[0]?.version : undefined;
      if (schemaStep(version, SCHEMA_VERSION, `the tables of ${this.where} have`) === 'current') return;
      await c.query(`
        CREATE TABLE IF NOT EXISTS deploy_state_schema (version integer NOT NULL);
        CREATE TABLE IF NOT EXISTS deploy_state_versions (
          id bigserial PRIMARY KEY,
          key text NOT NULL,
          serial bigint NOT NULL,
          lineage text NOT NULL,
          empty boolean NOT NULL,
          deleted boolean NOT NULL,
          sha256 text NOT NULL,
          size integer NOT NULL,
          created timestamptz NOT NULL,
          body bytea NOT NULL
        );
        CREATE INDEX IF NOT EXISTS deploy_state_versions_by_key ON deploy_state_versions (key, id);
        CREATE TABLE IF NOT EXISTS deploy_state_locks (
          key text PRIMARY KEY,
          id text NOT NULL,
          info text NOT NULL,
          created timestamptz NOT NULL
        );
        CREATE INDEX IF NOT EXISTS deploy_state_locks_by_id ON deploy_state_locks (id);`);
      await c.query('DELETE FROM deploy_state_schema');
      await c.query('INSERT INTO deploy_state_schema (version) VALUES ($1)', [SCHEMA_VERSION]);
    });
  }

  /** One write on `key`: excludes every other server's write on it until COMMIT. */
  private transaction<T>(key: string, fn: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.transactionOn('SELECT pg_advisory_xact_lock($1, hashtext($2))', [key], fn);
  }

  private async transactionOn<T>(lockSql: string, lockArgs: unknown[], fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query(lockSql, [LOCK_CLASS, ...lockArgs]);
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // a failed COMMIT is a failed write: the client gets a 5xx and tofu sends it again
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw this.classify(err);
    } finally {
      // a connection that could not even roll back is destroyed, not reused
      client.release(broken);
    }
  }

  private async query<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      return await fn(client);
    } catch (err) {
      const failure = this.classify(err);
      if (failure instanceof StoreUnavailableError) broken = failure;
      throw failure;
    } finally {
      // a connection that failed for want of the database is destroyed, not reused
      client.release(broken);
    }
  }

  private async connect(): Promise<PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw this.classify(err);
    }
  }

  /**
   * A database that is not there for a while (connection refused or cut, restarting, out of
   * connections, a deadline passed) is a StoreUnavailableError (503, retried); an error the
   * server reported about a statement stays as it is (500).
   * https://www.postgresql.org/docs/15/errcodes-appendix.html
   */
  private classify(err: unknown): Error {
    if (err instanceof StoreUnavailableError) return err;
    const code = (err as { code?: unknown }).code;
    const message = (err as Error)?.message ?? String(err);
    const sqlstate = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
    const transient = sqlstate
      ? /^(08|53|57P0)/.test(sqlstate) || ['55P03', '57014', '40001', '40P01'].includes(sqlstate)
      : // no answer from the server: the network (a system error code) or the client's connection
        (typeof code === 'string' && NETWORK_ERROR.test(code)) || CONNECTION_LOST.test(message);
    if (transient) return new StoreUnavailableError(`the state database ${this.where} is unavailable: ${message}`, { cause: err });
    return err instanceof Error ? err : new Error(message);
  }
}

async function latestOf(c: PoolClient, key: string): Promise<VersionMeta | undefined> {
  const row = (await c.query<VersionRow>(`SELECT ${COLUMNS} FROM deploy_state_versions WHERE key = $1 ORDER BY id DESC LIMIT 1`, [key])).rows[0];
  return row && toMeta(row);
}

import { createHash } from 'node:crypto';
import { ToolError } from '../../errors.js';
import type { LockInfo } from '../lock-info.js';
import type { StateHeader } from '../state-document.js';

/** One stored version of a state, without its bytes. */
export interface VersionMeta {
  readonly key: string;
  readonly serial: number;
  readonly lineage: string;
  readonly empty: boolean;
  /**
   * A DELETE of the state: no bytes (size 0), the serial and lineage of the version it
   * deleted. GET answers 404 after it; the versions before it stay readable by serial.
   */
  readonly deleted: boolean;
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
  /** The newest version: a deletion when the state was deleted. */
  readonly latest: VersionMeta | undefined;
  /** True when the newest version is a deletion. */
  readonly deleted: boolean;
  readonly versions: number;
  readonly lock: LockInfo | undefined;
}

export type UpdateResult =
  | { kind: 'stored'; version: VersionMeta }
  | { kind: 'identical'; version: VersionMeta }
  | { kind: 'refused'; reason: string }
  /** Locked by someone else, or `?ID=` names no lock that is held. */
  | { kind: 'lock-mismatch'; holder: LockInfo | undefined };

export type DeleteResult =
  | { kind: 'deleted'; version: VersionMeta }
  /** Deleted before (a retried DELETE): nothing new is stored. */
  | { kind: 'already-deleted'; version: VersionMeta }
  | { kind: 'not-found' }
  | { kind: 'lock-mismatch'; holder: LockInfo | undefined };

export type LockResult = { kind: 'acquired' } | { kind: 'already-held-by-you' } | { kind: 'held'; holder: LockInfo };
export type UnlockResult = { kind: 'released'; holder: LockInfo } | { kind: 'was-free' } | { kind: 'held'; holder: LockInfo };

/**
 * Where the state backend keeps every version of every state and the locks. Two
 * implementations: SQLite in a data directory (sqlite-store.ts, the default and the embedded
 * backend's) and PostgreSQL (postgres-store.ts, several servers on one database). Both judge
 * with the same rules (update-rules.ts), each write being one transaction that excludes every
 * other writer of the same key, in any process; no answer comes from a cache.
 */
export interface StateStore {
  /** For messages and logs: the data directory, or the database address without a password. */
  readonly where: string;
  /** The newest version (a deletion included). */
  latest(key: string): Promise<VersionMeta | undefined>;
  /** The newest version (undefined when there is none, or it is a deletion), or the newest stored with `serial`. */
  read(key: string, serial?: number): Promise<StoredState | undefined>;
  /** Every version, oldest first, deletions included. */
  versions(key: string): Promise<VersionMeta[]>;
  list(): Promise<StateSummary[]>;
  lockOf(key: string): Promise<LockInfo | undefined>;
  /** The keys whose lock has this ID (lock IDs are UUIDs: at most one, in practice). */
  findLock(id: string): Promise<{ key: string; info: LockInfo }[]>;
  /** Stores `body` as the next version if the update rules allow it and the caller holds the lock (`lockId`) when there is one. */
  update(key: string, body: Buffer, header: StateHeader, lockId: string | undefined): Promise<UpdateResult>;
  /** Stores a deletion as the next version, with the same lock rule as `update`. */
  delete(key: string, lockId: string | undefined): Promise<DeleteResult>;
  lock(key: string, info: LockInfo): Promise<LockResult>;
  unlock(key: string, id: string): Promise<UnlockResult>;
  close(): Promise<void>;
}

/**
 * The storage could not be used for a while (SQLite busy past its timeout, PostgreSQL
 * unreachable or restarting): the server answers 503 with Retry-After, never 404.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The store's tables were made by a newer deploy (exit 3). Nothing was changed: an older
 * deploy must not write a layout it does not know, and never migrates a schema down.
 */
export function newerSchemaError(what: string): ToolError {
  return new ToolError(what, {
    hint: 'a newer deploy wrote this state data: run that version of deploy (or a later one) against it; this one changed nothing in it',
  });
}

export function sha256Hex(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** The deletion that follows `current`: its serial and lineage, no bytes. */
export function deletionOf(current: VersionMeta, created: string): VersionMeta {
  return { key: current.key, serial: current.serial, lineage: current.lineage, empty: true, deleted: true, sha256: sha256Hex(Buffer.alloc(0)), size: 0, created };
}

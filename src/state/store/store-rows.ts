/**
 * The rows both storages keep (sqlite-store.ts, postgres-store.ts), read the same way: a
 * version's columns, a lock's record, and the schema version a store's tables were made at.
 */
import { parseJson } from '../../contract/parse-json.js';
import { type LockInfo, LockInfoSchema } from '../lock-info.js';
import { newerSchemaError, type VersionMeta } from './store.js';

/** The columns of a version, in this order in both storages. */
export const VERSION_COLUMNS = 'key, serial, lineage, empty, deleted, sha256, size, created';

/**
 * A version row as a storage returns it: SQLite gives integers for the flags and an ISO
 * string for the time, PostgreSQL booleans, a bigint serial as a string and a Date.
 */
export interface VersionRow {
  readonly key: string;
  readonly serial: number | string;
  readonly lineage: string;
  readonly empty: boolean | number;
  readonly deleted: boolean | number;
  readonly sha256: string;
  readonly size: number | string;
  readonly created: string | Date;
}

export function versionMetaOf(r: VersionRow): VersionMeta {
  return {
    key: r.key,
    serial: Number(r.serial),
    lineage: r.lineage,
    empty: Boolean(r.empty),
    deleted: Boolean(r.deleted),
    sha256: r.sha256,
    size: Number(r.size),
    created: typeof r.created === 'string' ? r.created : r.created.toISOString(),
  };
}

/** A lock row's record (the LockInfo tofu sent, stored as JSON), checked as it was on LOCK. */
export function lockInfoOf(info: string, key: string, where: string): LockInfo {
  return parseJson(LockInfoSchema, info, `the lock record of state "${key}" in ${where}`);
}

/**
 * What to do with tables at schema version `found` (undefined: none yet) for a deploy that
 * knows `known`: nothing (current), create or upgrade them (older), or refuse (newer: an older
 * deploy must not write a layout it does not know). `whatHas`: "<file> has", "the tables of <db> have".
 */
export function schemaStep(found: number | undefined, known: number, whatHas: string): 'current' | 'migrate' {
  if (found !== undefined && found > known) throw newerSchemaError(`${whatHas} schema version ${found}, newer than this deploy understands (${known})`);
  return found === known ? 'current' : 'migrate';
}

import type { LockInfo } from '../lock-info.js';
import type { StateHeader } from '../state-document.js';
import { type DeleteResult, deletionOf, type LockResult, type UnlockResult, type UpdateResult, type VersionMeta } from './store.js';

/** The stored version an update is judged against. */
export interface CurrentVersion {
  readonly header: StateHeader;
  readonly sha256: string;
}

export type UpdateDecision =
  /** A new version: store it. */
  | { kind: 'store' }
  /** The same bytes as the stored version (a retried POST): answer success, store nothing. */
  | { kind: 'identical' }
  /** Refused: storing it would lose or fork state. */
  | { kind: 'refuse'; reason: string };

/**
 * Whether an update may replace the current version. State never goes backwards
 * (law 7, docs/glossary.md): a lower serial, the same serial with other bytes, or another lineage
 * over a non-empty state would each throw away what the current version records.
 * Pure: no storage, no clock.
 */
export function decideUpdate(current: CurrentVersion | undefined, incoming: StateHeader, incomingSha256: string): UpdateDecision {
  if (!current) return { kind: 'store' };
  const cur = current.header;
  if (incoming.lineage !== cur.lineage) {
    if (cur.empty) return { kind: 'store' };
    return {
      kind: 'refuse',
      reason: `lineage ${incoming.lineage} differs from the stored state's lineage ${cur.lineage} (serial ${cur.serial}, not empty): this is another state, refusing to replace it`,
    };
  }
  if (incoming.serial < cur.serial) {
    return { kind: 'refuse', reason: `serial ${incoming.serial} is lower than the stored serial ${cur.serial}: state never goes backwards` };
  }
  if (incoming.serial === cur.serial) {
    if (incomingSha256 === current.sha256) return { kind: 'identical' };
    return { kind: 'refuse', reason: `serial ${incoming.serial} is already stored with other content: a changed state needs a higher serial` };
  }
  return { kind: 'store' };
}

/** A write (POST/PUT/DELETE) with `?ID=lockId` may go ahead: the caller holds the lock, or nobody does and it names none. */
function lockAllowsWrite(holder: LockInfo | undefined, lockId: string | undefined): boolean {
  return holder ? holder.ID === lockId : lockId === undefined;
}

/** What a store does with one request: the answer, and the row to write (none: write nothing). */
export interface Judgement<R> {
  readonly result: R;
  readonly insert?: VersionMeta;
}

export interface UpdateRequest {
  readonly key: string;
  readonly header: StateHeader;
  readonly sha256: string;
  readonly size: number;
  readonly lockId: string | undefined;
}

/**
 * An update against the lock holder and the newest version, both read inside the store's
 * transaction. After a deletion the key starts afresh (any serial, any lineage).
 */
export function judgeUpdate(req: UpdateRequest, holder: LockInfo | undefined, latest: VersionMeta | undefined, now: Date): Judgement<UpdateResult> {
  if (!lockAllowsWrite(holder, req.lockId)) return { result: { kind: 'lock-mismatch', holder } };
  const current = latest?.deleted ? undefined : latest;
  const decision = decideUpdate(current && { header: current, sha256: current.sha256 }, req.header, req.sha256);
  if (decision.kind === 'refuse') return { result: { kind: 'refused', reason: decision.reason } };
  if (decision.kind === 'identical') return { result: { kind: 'identical', version: current! } };
  const version: VersionMeta = {
    key: req.key,
    serial: req.header.serial,
    lineage: req.header.lineage,
    empty: req.header.empty,
    deleted: false,
    sha256: req.sha256,
    size: req.size,
    created: now.toISOString(),
  };
  return { result: { kind: 'stored', version }, insert: version };
}

/**
 * A DELETE is a version too (a deletion), so what was deleted stays readable by serial and
 * a deleted key shows as such. Deleting a deleted state again is a retried DELETE: success,
 * nothing new. A key that never had a state: not found.
 */
export function judgeDelete(lockId: string | undefined, holder: LockInfo | undefined, latest: VersionMeta | undefined, now: Date): Judgement<DeleteResult> {
  if (!lockAllowsWrite(holder, lockId)) return { result: { kind: 'lock-mismatch', holder } };
  if (!latest) return { result: { kind: 'not-found' } };
  if (latest.deleted) return { result: { kind: 'already-deleted', version: latest } };
  const version = deletionOf(latest, now.toISOString());
  return { result: { kind: 'deleted', version }, insert: version };
}

/** A retried LOCK (its answer was lost) with the holder's own ID must not fail as "locked by itself". */
export function judgeLock(holder: LockInfo | undefined, info: LockInfo): { result: LockResult; take: boolean } {
  if (!holder) return { result: { kind: 'acquired' }, take: true };
  if (holder.ID === info.ID) return { result: { kind: 'already-held-by-you' }, take: false };
  return { result: { kind: 'held', holder }, take: false };
}

/** Locks never expire: only UNLOCK with the holder's ID releases them. */
export function judgeUnlock(holder: LockInfo | undefined, id: string): { result: UnlockResult; release: boolean } {
  if (!holder) return { result: { kind: 'was-free' }, release: false };
  if (holder.ID !== id) return { result: { kind: 'held', holder }, release: false };
  return { result: { kind: 'released', holder }, release: true };
}

/**
 * The writes of a state store, written once for both storages (sqlite-store.ts and
 * postgres-store.ts): each is one transaction on its key that reads the key's lock (and, for
 * an update or a delete, its newest version), judges by the update rules (update-rules.ts) and
 * writes what the judgement says. A storage supplies only that transaction (`writeKey`):
 * SQLite's runs synchronously, PostgreSQL's under an advisory lock on the key.
 */
import type { LockInfo } from '../lock-info.js';
import type { StateHeader } from '../state-document.js';
import { type DeleteResult, type LockResult, sha256Hex, type StateStore, type UnlockResult, type UpdateResult, type VersionMeta } from './store.js';
import { judgeDelete, judgeLock, judgeUnlock, judgeUpdate } from './update-rules.js';

/** What a write found on its key, read inside its transaction. */
export interface KeyNow {
  readonly lock: LockInfo | undefined;
  /** Read only when the write says `readsLatest`. */
  readonly latest: VersionMeta | undefined;
}

/** What the storage writes for a judged write, and what it answers. */
export interface KeyWrites<R> {
  readonly result: R;
  readonly insert?: { readonly version: VersionMeta; readonly body: Buffer };
  readonly putLock?: LockInfo;
  readonly deleteLock?: string;
}

/** One write on a key: what it reads, and its judgement (pure: the storage's clock is `at`). */
export interface KeyWrite<R> {
  readonly readsLatest: boolean;
  judge(now: KeyNow, at: Date): KeyWrites<R>;
}

/** The four writes of a StateStore over a storage's one transaction per key. */
export abstract class JudgedStateStore implements Pick<StateStore, 'update' | 'delete' | 'lock' | 'unlock'> {
  /** Runs `write` in one transaction on `key`: reads what it reads, judges, writes what it says, commits. */
  protected abstract writeKey<R>(key: string, write: KeyWrite<R>): Promise<R>;

  update(key: string, body: Buffer, header: StateHeader, lockId: string | undefined): Promise<UpdateResult> {
    const req = { key, header, sha256: sha256Hex(body), size: body.length, lockId };
    return this.writeKey(key, {
      readsLatest: true,
      judge: ({ lock, latest }, at) => versionWrite(judgeUpdate(req, lock, latest, at), body),
    });
  }

  delete(key: string, lockId: string | undefined): Promise<DeleteResult> {
    return this.writeKey(key, {
      readsLatest: true,
      judge: ({ lock, latest }, at) => versionWrite(judgeDelete(lockId, lock, latest, at), Buffer.alloc(0)),
    });
  }

  lock(key: string, info: LockInfo): Promise<LockResult> {
    return this.writeKey(key, onLock((lock) => {
      const { result, take } = judgeLock(lock, info);
      return take ? { result, putLock: info } : { result };
    }));
  }

  unlock(key: string, id: string): Promise<UnlockResult> {
    return this.writeKey(key, onLock((lock) => {
      const { result, release } = judgeUnlock(lock, id);
      return release ? { result, deleteLock: id } : { result };
    }));
  }
}

/** A write judged by the key's lock alone (LOCK, UNLOCK): the newest version is not read. */
function onLock<R>(judge: (lock: LockInfo | undefined) => KeyWrites<R>): KeyWrite<R> {
  return { readsLatest: false, judge: ({ lock }) => judge(lock) };
}

function versionWrite<R>(judged: { result: R; insert?: VersionMeta | undefined }, body: Buffer): KeyWrites<R> {
  return judged.insert ? { result: judged.result, insert: { version: judged.insert, body } } : { result: judged.result };
}

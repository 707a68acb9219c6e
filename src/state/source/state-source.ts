/**
 * Where the operator verbs (`deploy state list|versions|show|unlock|migrate`) and the node-copy
 * check read states: a data directory (data-dir-source.ts) or an http backend
 * (http-source.ts), behind this one interface; open-state-source.ts chooses between them.
 */
import type { LockAnswer } from './http-client.js';
import type { LockInfo } from '../lock-info.js';
import type { StateSummary, VersionMeta } from '../store/store.js';

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
  /**
   * The command line of `deploy state <args>` that reaches this source, for messages that say
   * what to run (`--data DIR`, or TF_HTTP_ADDRESS=<base>; credentials stay out).
   */
  operatorCommand(args: string): string;
  close(): void;
}

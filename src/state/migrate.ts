/**
 * `deploy state migrate --to <base>`: copies every state (its newest version, bytes, serial and
 * lineage unchanged) from the embedded backend's data directory (or `--data DIR`, or
 * `--from <base>`) to another backend, under the same keys, so that runs with
 * TF_HTTP_ADDRESS=<base> continue exactly where the old backend left off.
 *
 * Per key: lock the source, lock the target (both with Who = this run), read both, copy only
 * when the target has no state or an older serial of the same lineage, read it back, release
 * both. A target with another lineage, a higher serial, or the same serial with other bytes
 * is refused: each means that runs already wrote there, and copying would lose their state.
 * The same state already at the target is a no-op, so running migrate again changes nothing.
 * It returns the outcome per key; src/cli/state-report.ts says them.
 */
import { ConfigError, ToolError } from '../errors.js';
import { describeLock, type LockInfo } from './lock-info.js';
import { defaultStateDataDir } from './paths.js';
import { runIdentity } from './run-lock.js';
import { parseStateHeader, type StateHeader } from './state-document.js';
import type { StateAccess } from './operator.js';
import { DataDirSource } from './data-dir-source.js';
import { HttpSource } from './http-source.js';
import type { StateSource } from './state-source.js';
import { sha256Hex } from './store.js';
import { randomUUID } from 'node:crypto';

export const FROM_USERNAME_ENV = 'DEPLOY_MIGRATE_FROM_USERNAME';
export const FROM_PASSWORD_ENV = 'DEPLOY_MIGRATE_FROM_PASSWORD';

export interface MigrateOptions {
  /** Base address of the target backend (credentials TF_HTTP_USERNAME/PASSWORD). */
  readonly to: string;
  /** Base address of the source backend; default: the data directory. */
  readonly from?: string | undefined;
  /** The source data directory; default: the embedded backend's. */
  readonly data?: string | undefined;
  /** Only these keys (needed when the source cannot list its states). */
  readonly key?: readonly string[] | undefined;
}

export type KeyOutcome =
  | { key: string; result: 'copied'; serial: number; lineage: string; replaced?: { serial: number } }
  | { key: string; result: 'already-there'; serial: number; lineage: string }
  | { key: string; result: 'refused'; reason: string };

/** What a migration did: where from, where to, and per key (in order) what happened. */
export interface MigrateResult {
  readonly from: string;
  readonly to: string;
  readonly outcomes: readonly KeyOutcome[];
}

/** Migrates each key in turn; `onOutcome` hears each as it is decided (a later failure does not hide it). */
export async function migrateStates(ctx: StateAccess, opts: MigrateOptions, onOutcome: (outcome: KeyOutcome) => void): Promise<MigrateResult> {
  if (opts.from && opts.data) throw new ConfigError('two sources', [{ where: '--from/--data', message: 'give one source: a backend address (--from) or a data directory (--data)' }]);
  const who = runIdentity(ctx.env);
  const target = new HttpSource({ address: opts.to, addressName: '--to', username: ctx.env.TF_HTTP_USERNAME, password: ctx.env.TF_HTTP_PASSWORD, signal: ctx.signal });
  const source: StateSource = opts.from
    ? new HttpSource({ address: opts.from, addressName: '--from', username: ctx.env[FROM_USERNAME_ENV], password: ctx.env[FROM_PASSWORD_ENV], signal: ctx.signal })
    : new DataDirSource(opts.data ?? defaultStateDataDir(ctx.env));
  try {
    if (source.where.replace(/\/+$/, '') === target.where.replace(/\/+$/, '')) {
      throw new ConfigError('the source and the target are the same backend', [{ where: '--to', message: `${target.where} is also where the states are read from` }]);
    }
    // a deleted state (DELETE: its newest version is a deletion) has nothing to carry over
    const keys = opts.key?.length ? [...opts.key] : (await source.list()).filter((s) => s.latest && !s.deleted).map((s) => s.key);
    const outcomes: KeyOutcome[] = [];
    for (const key of keys) {
      ctx.signal.throwIfAborted();
      const outcome = await migrateKey(source, target, key, who);
      outcomes.push(outcome);
      onOutcome(outcome);
    }
    return { from: source.where, to: target.where, outcomes };
  } finally {
    source.close();
    target.close();
  }
}

async function migrateKey(source: StateSource, target: StateSource, key: string, who: string): Promise<KeyOutcome> {
  const info: LockInfo = {
    ID: randomUUID(),
    Operation: 'deploy state migrate',
    Info: `${source.where} -> ${target.where}`,
    Who: who,
    Version: 'deploy',
    Created: new Date().toISOString(),
    Path: '',
  };
  const onSource = await source.lock(key, info);
  if (onSource.kind === 'held') return { key, result: 'refused', reason: `locked at the source by ${onSource.holder ? describeLock(onSource.holder) : 'another run'}: wait for that run` };
  try {
    const onTarget = await target.lock(key, info);
    if (onTarget.kind === 'held') return { key, result: 'refused', reason: `locked at the target by ${onTarget.holder ? describeLock(onTarget.holder) : 'another run'}: wait for that run` };
    try {
      return await copyLocked(source, target, key, info.ID);
    } finally {
      await target.unlock(info.ID, key);
    }
  } finally {
    await source.unlock(info.ID, key);
  }
}

/** Both sides are locked by `lockId`: decide, copy, read back. */
async function copyLocked(source: StateSource, target: StateSource, key: string, lockId: string): Promise<KeyOutcome> {
  const body = await source.read(key);
  if (!body) return { key, result: 'refused', reason: `no state "${key}" at the source` };
  const from = header(body, key, source.where);
  const existing = await target.read(key);
  const to = existing && header(existing, key, target.where);
  if (to && existing) {
    if (to.lineage !== from.lineage) {
      return {
        key,
        result: 'refused',
        reason: `the target holds another state: lineage ${to.lineage} (serial ${to.serial}), the source lineage ${from.lineage} (serial ${from.serial}); nothing copied: find out which deployment the target's state belongs to before anything else`,
      };
    }
    if (to.serial > from.serial) {
      return { key, result: 'refused', reason: `the target is ahead: serial ${to.serial} there, ${from.serial} here (runs already wrote to the target); nothing copied` };
    }
    if (to.serial === from.serial) {
      if (sha256Hex(existing) === sha256Hex(body)) return { key, result: 'already-there', serial: from.serial, lineage: from.lineage };
      return { key, result: 'refused', reason: `serial ${to.serial} is at the target with other content; nothing copied` };
    }
  }
  await target.write(key, body, lockId);
  const back = await target.read(key);
  if (!back || sha256Hex(back) !== sha256Hex(body)) {
    throw new ToolError(`the state "${key}" read back from ${target.where} is not the one written`, { hint: 'check the target backend; the source still holds the state unchanged' });
  }
  return { key, result: 'copied', serial: from.serial, lineage: from.lineage, ...(to ? { replaced: { serial: to.serial } } : {}) };
}

function header(body: Buffer, key: string, where: string): StateHeader {
  const parsed = parseStateHeader(body);
  if (!parsed.ok) throw new ToolError(`the state "${key}" in ${where} is not a state document: ${parsed.problem}`);
  return parsed.header;
}

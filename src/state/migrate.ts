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
 * It returns the outcome per key; src/cli/report/state-report.ts says them.
 *
 * Interrupted (the run's signal), it starts no new key and no new request of the key under
 * way, but always releases what it locked and finishes a write it began (those requests take
 * their own deadline, never the signal: http-client.ts); then it throws an InterruptedError
 * that says which keys are done, which are not, and any lock it could not release, with the
 * command that frees it.
 */
import { hostname } from 'node:os';
import type { HttpBackendCoordinates } from '../config/backend-coordinates.js';
import { shq } from '../contract/shell.js';
import { ConfigError, DeployError, ExitCode, InterruptedError, ToolError } from '../errors.js';
import type { HeldLock } from './held-locks.js';
import { describeJudgement, judgeHolder, staleUnlockCommand } from './lock-holder.js';
import { describeLock, type LockInfo } from './lock-info.js';
import { runIdentity } from './run-lock.js';
import { parseStateHeader, type StateHeader } from './state-document.js';
import type { StateAccess } from './operator.js';
import { DataDirSource } from './source/data-dir-source.js';
import { HttpSource } from './source/http-source.js';
import type { StateSource } from './source/state-source.js';
import { sha256Hex } from './store/store.js';
import { randomUUID } from 'node:crypto';

export interface MigrateOptions {
  /** The target backend (--to; credentials TF_HTTP_USERNAME/PASSWORD). */
  readonly to: HttpBackendCoordinates;
  /** The source backend (--from); default: the data directory. */
  readonly from?: HttpBackendCoordinates | undefined;
  /** The source data directory (--data). */
  readonly data?: string | undefined;
  /** The source data directory without --data or --from: the embedded backend's. */
  readonly defaultDataDir: string;
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
  // The target's requests take their own deadlines, not the signal: a stop is checked between
  // them, so that a lock taken or a state written there is always known (and released).
  const target = new HttpSource(opts.to);
  const source: StateSource = opts.from ? new HttpSource(opts.from, ctx.signal) : new DataDirSource(opts.data ?? opts.defaultDataDir);
  const outcomes: KeyOutcome[] = [];
  let keys: string[] | undefined;
  try {
    if (source.where.replace(/\/+$/, '') === target.where.replace(/\/+$/, '')) {
      throw new ConfigError('the source and the target are the same backend', [{ where: '--to', message: `${target.where} is also where the states are read from` }]);
    }
    // a deleted state (DELETE: its newest version is a deletion) has nothing to carry over
    keys = opts.key?.length ? [...opts.key] : (await source.list()).filter((s) => s.latest && !s.deleted).map((s) => s.key);
    for (const key of keys) {
      if (ctx.signal.aborted) break;
      const run = await migrateKey({ source, target, ctx }, key, who);
      if (run.outcome) {
        outcomes.push(run.outcome);
        onOutcome(run.outcome);
      }
      if (run.left.length > 0 && !ctx.signal.aborted) throw locksLeft(key, run.left);
      if (ctx.signal.aborted) throw interruptedMigration(keys, outcomes, run);
    }
    if (ctx.signal.aborted) throw interruptedMigration(keys, outcomes, undefined);
    return { from: source.where, to: target.where, outcomes };
  } catch (err) {
    // a read the signal cut (GET ... failed: SIGINT) is the interrupt, not a backend failure
    if (ctx.signal.aborted && !(err instanceof InterruptedError) && !(err instanceof ConfigError)) throw interruptedMigration(keys ?? [], outcomes, undefined, err, ctx.signal.reason);
    throw err;
  } finally {
    source.close();
    target.close();
  }
}

/** What one key's migration did: its outcome, whether the signal stopped it, the locks it could not release. */
interface KeyRun {
  readonly key: string;
  readonly outcome: KeyOutcome | undefined;
  /** Set when the signal stopped this key before its copy: what was left of it. */
  readonly stopped: string | undefined;
  /** Locks of this run on the key that could not be released, with why. */
  readonly left: readonly (HeldLock & { readonly error: string })[];
}

interface Sides {
  readonly source: StateSource;
  readonly target: StateSource;
  readonly ctx: StateAccess;
}

async function migrateKey({ source, target, ctx }: Sides, key: string, who: string): Promise<KeyRun> {
  const info: LockInfo = {
    ID: randomUUID(),
    Operation: 'deploy state migrate',
    // the PID and host let a later run tell a lock left by this one from a live one (lock-holder.ts)
    Info: `${source.where} -> ${target.where}, pid ${process.pid} on ${hostname()}`,
    Who: who,
    Version: 'deploy',
    Created: new Date().toISOString(),
    Path: '',
  };
  const locked: { side: StateSource; lock: HeldLock; forget: () => void }[] = [];
  const take = async (side: StateSource, where: 'source' | 'target'): Promise<KeyOutcome | undefined> => {
    const answer = await side.lock(key, info);
    if (answer.kind === 'held') return { key, result: 'refused', reason: `locked at the ${where} by ${refusalOf(side, key, answer.holder)}` };
    const lock: HeldLock = { key, id: info.ID, where: side.where, free: side.operatorCommand(`unlock ${info.ID} --key ${shq(key)}`) };
    locked.push({ side, lock, forget: ctx.held?.hold(lock) ?? (() => {}) });
    return undefined;
  };
  const stoppedBeforeCopy = 'stopped before its copy: nothing written to the target';
  let outcome: KeyOutcome | undefined;
  let stopped: string | undefined;
  let failure: unknown;
  try {
    outcome = await take(source, 'source');
    if (!outcome && ctx.signal.aborted) stopped = stoppedBeforeCopy;
    if (!outcome && !stopped) outcome = await take(target, 'target');
    if (!outcome && !stopped && ctx.signal.aborted) stopped = stoppedBeforeCopy;
    if (!outcome && !stopped) {
      const copy = await copyLocked(source, target, key, info.ID, ctx.signal);
      if (copy === 'stopped') stopped = stoppedBeforeCopy;
      else outcome = copy;
    }
  } catch (err) {
    failure = err;
  }
  // the target first, then the source (the order they were taken in, reversed)
  const left: (HeldLock & { error: string })[] = [];
  for (const { side, lock, forget } of locked.reverse()) {
    try {
      await side.unlock(info.ID, key);
      forget();
    } catch (err) {
      left.push({ ...lock, error: (err as Error).message });
    }
  }
  if (failure) throw left.length > 0 ? locksLeft(key, left, failure) : failure;
  return { key, outcome, stopped, left };
}

/** Who holds the lock that refused a key, and what to do: wait, or free a stale one. */
function refusalOf(side: StateSource, key: string, holder: LockInfo | undefined): string {
  if (!holder) return 'another run: wait for that run';
  const judged = judgeHolder(holder);
  const what = `${describeLock(holder)}: ${describeJudgement(judged)}`;
  return judged.kind === 'gone' ? `${what}; free it: ${staleUnlockCommand(side, key)}` : what;
}

/** Locks of this run that could not be released (exit 3), each with the command that frees it. */
function locksLeft(key: string, left: KeyRun['left'], cause?: unknown): ToolError {
  const first = cause instanceof Error ? `${cause.message}; and ` : '';
  return new ToolError(`${first}the lock of this run on "${key}" could not be released: ${left.map((l) => `${l.where} (${l.error})`).join('; ')}`, {
    hint: `once the backend answers again, free it: ${left.map((l) => l.free).join(' ; ')}`,
    cause,
  });
}

/** What an interrupted migration did and did not do, and what to run next. */
function interruptedMigration(keys: readonly string[], outcomes: readonly KeyOutcome[], last: KeyRun | undefined, cause?: unknown, stopReason?: unknown): InterruptedError {
  const decided = new Set(outcomes.map((o) => o.key));
  const notDone = keys.filter((k) => !decided.has(k));
  const count = (r: KeyOutcome['result']) => outcomes.filter((o) => o.result === r).length;
  const parts = [
    keys.length === 0
      ? 'interrupted before any state was read: nothing was locked or copied'
      : `interrupted after ${outcomes.length} of ${keys.length} states (${count('copied')} copied, ${count('already-there')} already at the target, ${count('refused')} refused)`,
  ];
  if (last?.stopped) parts.push(`${last.key}: ${last.stopped}`);
  if (notDone.length > 0) parts.push(`not migrated: ${notDone.slice(0, 10).join(', ')}${notDone.length > 10 ? ` and ${notDone.length - 10} more` : ''}`);
  const left = last?.left ?? [];
  if (left.length > 0) {
    parts.push(`the lock of this run on "${last!.key}" could not be released: ${left.map((l) => `${l.where} (${l.error}); free it: ${l.free}`).join('; ')}`);
  } else if (keys.length > 0) {
    parts.push('every lock this run took is released');
  }
  // a failure met while stopping (not a read the signal cut) is said, with its own next step
  const met = cause instanceof DeployError && cause.exitCode !== ExitCode.interrupted && !(stopReason !== undefined && cause.cause === stopReason) ? cause : undefined;
  if (met) parts.push(`meanwhile: ${met.message}`);
  return new InterruptedError(parts.join('; '), {
    hint: met?.hint ? `${met.hint}; then run the same command again` :
      left.length > 0
        ? 'free the lock named above, then run the same command again: it copies what is missing and leaves what is there'
        : 'run the same command again: it copies what is missing and leaves what is there',
    cause,
  });
}

/**
 * Both sides are locked by `lockId`: decide, copy, read back. 'stopped': the signal came
 * before the write (nothing written). Once the write is sent it is finished and read back.
 */
async function copyLocked(source: StateSource, target: StateSource, key: string, lockId: string, signal: AbortSignal): Promise<KeyOutcome | 'stopped'> {
  let body: Buffer | undefined;
  let existing: Buffer | undefined;
  try {
    body = await source.read(key);
    if (!body) return { key, result: 'refused', reason: `no state "${key}" at the source` };
    if (signal.aborted) return 'stopped';
    existing = await target.read(key);
  } catch (err) {
    if (signal.aborted) return 'stopped';
    throw err;
  }
  const from = header(body, key, source.where);
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
  if (signal.aborted) return 'stopped';
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

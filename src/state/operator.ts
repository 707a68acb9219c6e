/**
 * The operator verbs `deploy state list|versions|show|unlock`: they read and unlock the states
 * and return what they found; src/cli/report/state-report.ts says it (tables, JSON, lines).
 */
import type { BackendCoordinates } from '../config/backend-coordinates.js';
import { ConfigError, DeployError, ExitCode } from '../errors.js';
import { shq } from '../contract/shell.js';
import type { HeldLocks } from './held-locks.js';
import { describeJudgement, judgeHolder, type HostFacts } from './lock-holder.js';
import { describeLock, noSuchLock, type LockInfo } from './lock-info.js';
import { isDatabaseUrl } from './store/open-store.js';
import { redactState } from './redact.js';
import { DataDirSource } from './source/data-dir-source.js';
import { openStateSource } from './source/open-state-source.js';
import type { StateSource } from './source/state-source.js';
import type { StateSummary, VersionMeta } from './store/store.js';

/** What the operator verbs read: the environment (DEPLOY_RUN_ID) and the run's signal. */
export interface StateAccess {
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
  /** Where the locks this run takes are recorded while it holds them (a second Ctrl-C names them). */
  readonly held?: HeldLocks | undefined;
}

/**
 * Where to read: --data, else the backend's coordinates (TF_HTTP_ADDRESS, else the embedded
 * backend's data directory), parsed only when there is no --data.
 */
export type SourceOptions = { readonly data: string } | { readonly data?: undefined; readonly backend: BackendCoordinates };

/** --data, else TF_HTTP_ADDRESS, else the embedded backend's data directory. */
function openSource(ctx: StateAccess, opts: SourceOptions): StateSource {
  if (opts.data && isDatabaseUrl(opts.data)) {
    // (the URL is not echoed: it may carry a password)
    throw new ConfigError('--data names a PostgreSQL database', [
      {
        where: '--data',
        message: 'these verbs read a SQLite data directory; reach a PostgreSQL-backed backend through one of its servers: TF_HTTP_ADDRESS=http://<server>:<port> (and TF_HTTP_USERNAME/TF_HTTP_PASSWORD)',
      },
    ]);
  }
  return opts.data !== undefined ? new DataDirSource(opts.data) : openStateSource(opts.backend, ctx.signal);
}

async function withSource<T>(ctx: StateAccess, opts: SourceOptions, fn: (s: StateSource) => Promise<T>): Promise<T> {
  const source = openSource(ctx, opts);
  try {
    return await fn(source);
  } finally {
    source.close();
  }
}

/** Every state with its newest version and lock; `where` names the source for messages. */
export async function listStates(ctx: StateAccess, opts: SourceOptions): Promise<{ where: string; states: StateSummary[] }> {
  return withSource(ctx, opts, async (source) => ({ where: source.where, states: await source.list() }));
}

/** Every kept version of `key` (none: an empty list). */
export async function listVersions(ctx: StateAccess, key: string, opts: SourceOptions): Promise<{ where: string; versions: VersionMeta[] }> {
  return withSource(ctx, opts, async (source) => ({ where: source.where, versions: await source.versions(key) }));
}

/** A state document (the newest, or `serial`) with every secret value hidden; `hidden` counts them. */
export async function showState(ctx: StateAccess, key: string | undefined, opts: SourceOptions & { serial?: number | undefined }): Promise<{ doc: unknown; hidden: number }> {
  return withSource(ctx, opts, async (source) => {
    const body = await source.read(key, opts.serial);
    if (!body) {
      throw new DeployError(`no state${key ? ` "${key}"` : ''}${opts.serial === undefined ? '' : ` with serial ${opts.serial}`} in ${source.where}`, ExitCode.usage, {
        hint: '`deploy state list` and `deploy state versions <key>` show what is kept',
      });
    }
    let doc: unknown;
    try {
      doc = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new DeployError(`the stored state${key ? ` "${key}"` : ''} is not JSON`, ExitCode.tool, { cause: err });
    }
    return redactState(doc);
  });
}

export type UnlockOptions = SourceOptions & {
  readonly key?: string | undefined;
  /** Release only a lock whose `Who` is this run (DEPLOY_RUN_ID of the run that took it). */
  readonly heldBy?: string | undefined;
  /** Release only locks whose holder is judged gone (lock-holder.ts): this host, its PID not running. */
  readonly forceStale?: boolean | undefined;
  /** This machine, for --force-stale. @default lock-holder.ts thisHost() */
  readonly host?: HostFacts | undefined;
};

/** One lock released: on `key`, its ID, and who held it when that is known. */
export interface ReleasedLock {
  readonly key: string;
  readonly id: string;
  readonly holder: LockInfo | undefined;
  /** --force-stale: why it was judged stale. */
  readonly stale?: string | undefined;
}

/** --force-stale without --key: a held lock that was left alone, and why. */
export interface KeptLock {
  readonly key: string;
  readonly info: LockInfo;
  readonly why: string;
}

/**
 * `deploy state unlock <ID>` releases the lock with that ID; `--held-by <who>` releases only
 * the locks that run holds: on `--key`, or on every state of a backend that lists its states
 * (a data directory, `deploy state serve`). A named state locked by another run is an error
 * that names the holder, and nothing is released; a state that is not locked is fine (the
 * CD workflow's last step runs this after every job, also after a clean one).
 * Each release is given to `onReleased` as it happens (a later failure does not hide it);
 * returns where it looked and how many it released.
 */
export async function unlockState(
  ctx: StateAccess,
  id: string | undefined,
  opts: UnlockOptions,
  onReleased: (released: ReleasedLock) => void,
  onKept: (kept: KeptLock) => void = () => {},
): Promise<{ where: string; released: number }> {
  if (opts.forceStale) {
    if (opts.heldBy !== undefined) throw new ConfigError('--force-stale and --held-by both choose the locks', [{ where: '--force-stale', message: 'give one: --held-by <who> (a run you know is gone) or --force-stale (a holder deploy can check)' }]);
    return withSource(ctx, opts, (source) => releaseStale(source, id, opts, onReleased, onKept));
  }
  if (opts.heldBy === undefined) {
    if (!id) throw new ConfigError('nothing names the lock to release', [{ where: '<id>', message: 'give the lock ID (`deploy state list` shows it), or --held-by <who>' }]);
    return withSource(ctx, opts, async (source) => {
      const { key, holder } = await source.unlock(id, opts.key);
      onReleased({ key, id, holder });
      return { where: source.where, released: 1 };
    });
  }
  const who = opts.heldBy;
  if (who === '') throw new ConfigError('--held-by is empty', [{ where: '--held-by', message: 'name the run whose lock to release (its DEPLOY_RUN_ID)' }]);
  return withSource(ctx, opts, async (source) => {
    const locks = await locksToRelease(source, opts.key);
    const mine = locks.filter((l) => l.info.Who === who && (!id || l.info.ID === id));
    const others = locks.filter((l) => !mine.includes(l));
    if (opts.key && others.length > 0) {
      const o = others[0]!;
      throw new DeployError(`"${o.key}" in ${source.where} is locked by another run: ${describeLock(o.info)}; not released`, ExitCode.usage, {
        hint: o.info.Who ? `release it as that run: deploy state unlock --held-by '${o.info.Who}' --key ${o.key} (only when that run is gone)` : 'release it by its ID when its run is gone: deploy state unlock <ID>',
      });
    }
    for (const l of mine) {
      const { key, holder } = await source.unlock(l.info.ID, l.key);
      onReleased({ key, id: l.info.ID, holder: holder ?? l.info });
    }
    return { where: source.where, released: mine.length };
  });
}

/**
 * `--force-stale`: releases the locks whose holder is gone (taken on this host by a PID that
 * no longer runs: lock-holder.ts), each by its own ID, so that a lock taken since by another
 * run is never the one released. A lock named by --key or the ID that is not judged stale is
 * an error naming why (exit 2; nothing released); without them, such locks are kept and said.
 */
async function releaseStale(
  source: StateSource,
  id: string | undefined,
  opts: UnlockOptions,
  onReleased: (released: ReleasedLock) => void,
  onKept: (kept: KeptLock) => void,
): Promise<{ where: string; released: number }> {
  const locks = (await locksToRelease(source, opts.key)).filter((l) => !id || l.info.ID === id);
  if (id && locks.length === 0) throw noSuchLock(id, source.where, opts.key, undefined);
  const judged = locks.map((l) => ({ ...l, judgement: judgeHolder(l.info, opts.host) }));
  const named = opts.key !== undefined || id !== undefined;
  const live = judged.find((l) => l.judgement.kind !== 'gone');
  if (named && live) {
    throw new DeployError(`"${live.key}" in ${source.where} is locked by ${describeLock(live.info)}; not released: ${describeJudgement(live.judgement)}`, ExitCode.usage, {
      hint:
        live.judgement.kind === 'other-host'
          ? `on ${live.judgement.process.host}, check that pid ${live.judgement.process.pid} is not that run; then free it by its ID: ${source.operatorCommand(`unlock ${live.info.ID} --key ${shq(live.key)}`)}`
          : live.judgement.kind === 'running'
            ? `wait for pid ${live.judgement.process.pid} to end (it releases its lock itself), or stop it (kill -INT ${live.judgement.process.pid}); then run this again`
            : `when you know that run is gone, free it by its ID: ${source.operatorCommand(`unlock ${live.info.ID} --key ${shq(live.key)}`)}`,
    });
  }
  let released = 0;
  for (const l of judged) {
    if (l.judgement.kind !== 'gone') {
      onKept({ key: l.key, info: l.info, why: describeJudgement(l.judgement) });
      continue;
    }
    const { key, holder } = await source.unlock(l.info.ID, l.key);
    onReleased({ key, id: l.info.ID, holder: holder ?? l.info, stale: describeJudgement(l.judgement) });
    released += 1;
  }
  return { where: source.where, released };
}

/** The held locks to consider: the one on `key`, or every one the source lists. */
async function locksToRelease(source: StateSource, key: string | undefined): Promise<{ key: string; info: LockInfo }[]> {
  if (!key) return (await source.list()).flatMap((s) => (s.lock ? [{ key: s.key, info: s.lock }] : []));
  const info = await source.lockOf(key);
  return info ? [{ key, info }] : [];
}

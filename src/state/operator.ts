import type { CliContext } from '../cli/context.js';
import { ConfigError, DeployError, ExitCode } from '../errors.js';
import { describeLock, type LockInfo } from './lock-info.js';
import { isDatabaseUrl } from './open-store.js';
import { redactState } from './redact.js';
import { DataDirSource, openStateSource, type StateSource } from './state-source.js';

interface SourceOptions {
  readonly data?: string | undefined;
}

/** --data, else TF_HTTP_ADDRESS, else the embedded backend's data directory. */
function openSource(ctx: CliContext, opts: SourceOptions): StateSource {
  if (opts.data && isDatabaseUrl(opts.data)) {
    // (the URL is not echoed: it may carry a password)
    throw new ConfigError('--data names a PostgreSQL database', [
      {
        where: '--data',
        message: 'these verbs read a SQLite data directory; reach a PostgreSQL-backed backend through one of its servers: TF_HTTP_ADDRESS=http://<server>:<port> (and TF_HTTP_USERNAME/TF_HTTP_PASSWORD)',
      },
    ]);
  }
  return opts.data ? new DataDirSource(opts.data) : openStateSource(ctx.env, ctx.signal);
}

async function withSource<T>(ctx: CliContext, opts: SourceOptions, fn: (s: StateSource) => Promise<T>): Promise<T> {
  const source = openSource(ctx, opts);
  try {
    return await fn(source);
  } finally {
    source.close();
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export async function listStates(ctx: CliContext, opts: SourceOptions & { json?: boolean | undefined }): Promise<void> {
  await withSource(ctx, opts, async (source) => {
    const states = await source.list();
    if (opts.json) {
      ctx.stdout.write(`${JSON.stringify(states, null, 2)}\n`);
      return;
    }
    if (states.length === 0) {
      ctx.stderr.write(`no states in ${source.where}\n`);
      return;
    }
    const rows = [['KEY', 'SERIAL', 'VERSIONS', 'UPDATED', 'SIZE', 'LOCK']];
    for (const s of states) {
      rows.push([
        // a deleted state is listed with its versions (`deploy state versions` shows them)
        s.deleted ? `${s.key} (deleted)` : s.key,
        s.latest ? String(s.latest.serial) : '-',
        String(s.versions),
        s.latest?.created ?? '-',
        s.latest && !s.deleted ? String(s.latest.size) : '-',
        s.lock ? describeLock(s.lock) : '-',
      ]);
    }
    ctx.stdout.write(table(rows));
  });
}

export async function listVersions(ctx: CliContext, key: string, opts: SourceOptions & { json?: boolean | undefined }): Promise<void> {
  await withSource(ctx, opts, async (source) => {
    const versions = await source.versions(key);
    if (opts.json) {
      ctx.stdout.write(`${JSON.stringify(versions, null, 2)}\n`);
      return;
    }
    if (versions.length === 0) throw new DeployError(`no state "${key}" in ${source.where}`, ExitCode.usage, { hint: '`deploy state list` shows the keys' });
    const rows = [['SERIAL', 'TIME', 'SIZE', 'LINEAGE', 'SHA256']];
    for (const v of versions) rows.push([String(v.serial), v.created, v.deleted ? 'deleted' : String(v.size), v.lineage, v.deleted ? '-' : v.sha256.slice(0, 12)]);
    ctx.stdout.write(table(rows));
  });
}

export async function showState(ctx: CliContext, key: string | undefined, opts: SourceOptions & { serial?: number | undefined }): Promise<void> {
  await withSource(ctx, opts, async (source) => {
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
    const { doc: redacted, hidden } = redactState(doc);
    ctx.stdout.write(`${JSON.stringify(redacted, null, 2)}\n`);
    if (hidden > 0) ctx.logger().info({ kind: 'state-redacted', hidden }, `${hidden} secret value(s) hidden`);
  });
}

export interface UnlockOptions extends SourceOptions {
  readonly key?: string | undefined;
  /** Release only a lock whose `Who` is this run (DEPLOY_RUN_ID of the run that took it). */
  readonly heldBy?: string | undefined;
}

/**
 * `deploy state unlock <ID>` releases the lock with that ID; `--held-by <who>` releases only
 * the locks that run holds: on `--key`, or on every state of a backend that lists its states
 * (a data directory, `deploy state serve`). A named state locked by another run is an error
 * that names the holder, and nothing is released; a state that is not locked is fine (the
 * CD workflow's last step runs this after every job, also after a clean one).
 */
export async function unlockState(ctx: CliContext, id: string | undefined, opts: UnlockOptions): Promise<void> {
  if (opts.heldBy === undefined) {
    if (!id) throw new ConfigError('nothing names the lock to release', [{ where: '<id>', message: 'give the lock ID (`deploy state list` shows it), or --held-by <who>' }]);
    await withSource(ctx, opts, async (source) => {
      const { key, holder } = await source.unlock(id, opts.key);
      reportReleased(ctx, key, id, holder);
    });
    return;
  }
  const who = opts.heldBy;
  if (who === '') throw new ConfigError('--held-by is empty', [{ where: '--held-by', message: 'name the run whose lock to release (its DEPLOY_RUN_ID)' }]);
  await withSource(ctx, opts, async (source) => {
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
      reportReleased(ctx, key, l.info.ID, holder ?? l.info);
    }
    if (mine.length === 0) ctx.stdout.write(`no lock held by ${who}${opts.key ? ` on "${opts.key}"` : ''} in ${source.where}: nothing to release\n`);
  });
}

/** The held locks to consider: the one on `key`, or every one the source lists. */
async function locksToRelease(source: StateSource, key: string | undefined): Promise<{ key: string; info: LockInfo }[]> {
  if (!key) return (await source.list()).flatMap((s) => (s.lock ? [{ key: s.key, info: s.lock }] : []));
  const info = await source.lockOf(key);
  return info ? [{ key, info }] : [];
}

function reportReleased(ctx: CliContext, key: string, id: string, holder: LockInfo | undefined): void {
  ctx.stdout.write(`released lock ${id} on "${key}"${holder ? ` (${describeLock(holder)})` : ''}\n`);
  ctx.logger().warn({ kind: 'state-unlocked', key, id, who: holder?.Who }, 'lock released by operator');
}

import type { CliContext } from '../cli/context.js';
import { DeployError, ExitCode } from '../errors.js';
import { describeLock } from './lock-info.js';
import { defaultStateDataDir } from './paths.js';
import { redactState } from './redact.js';
import { DataDirSource, HttpSource, type StateSource } from './state-source.js';

interface SourceOptions {
  readonly data?: string | undefined;
}

/** --data, else TF_HTTP_ADDRESS, else the embedded backend's data directory. */
function openSource(ctx: CliContext, opts: SourceOptions): StateSource {
  if (opts.data) return new DataDirSource(opts.data);
  if (ctx.env.TF_HTTP_ADDRESS) return new HttpSource(ctx.env, ctx.signal);
  return new DataDirSource(defaultStateDataDir(ctx.env));
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

export async function unlockState(ctx: CliContext, id: string, opts: SourceOptions & { key?: string | undefined }): Promise<void> {
  await withSource(ctx, opts, async (source) => {
    const { key, holder } = await source.unlock(id, opts.key);
    ctx.stdout.write(`released lock ${id} on "${key}"${holder ? ` (${describeLock(holder)})` : ''}\n`);
    ctx.logger().warn({ kind: 'state-unlocked', key, id, who: holder?.Who }, 'lock released by operator');
  });
}

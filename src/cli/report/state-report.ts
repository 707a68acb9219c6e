/**
 * What `deploy state list|versions|show|unlock|migrate` say: tables and lines on stdout, the
 * next steps on stderr. src/state/ finds the facts; this module words them.
 */
import { DeployError, ExitCode } from '../../errors.js';
import { judgeHolder } from '../../state/lock-holder.js';
import { describeLock, type LockInfo } from '../../state/lock-info.js';
import type { KeyOutcome, MigrateResult } from '../../state/migrate.js';
import type { KeptLock, ReleasedLock } from '../../state/operator.js';
import type { StateSummary, VersionMeta } from '../../state/store/store.js';
import type { CliContext } from '../context.js';
import { table } from './table.js';


function writeJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `deploy state list`. */
export function reportStates(ctx: CliContext, { where, states }: { where: string; states: readonly StateSummary[] }, json: boolean | undefined): void {
  if (json) return writeJson(ctx, states);
  if (states.length === 0) {
    ctx.stderr.write(`no states in ${where}\n`);
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
      s.lock ? `${describeLock(s.lock)}${staleMark(s.lock)}` : '-',
    ]);
  }
  ctx.stdout.write(table(rows));
}

/** ' (STALE: ...)' for a lock whose holder is gone (lock-holder.ts), else ''. */
function staleMark(lock: LockInfo): string {
  const judged = judgeHolder(lock);
  return judged.kind === 'gone' ? ` (STALE: pid ${judged.process.pid} no longer runs on this host; deploy state unlock --force-stale frees it)` : '';
}

/** `deploy state versions <key>`: a key without versions is an error in text (JSON: `[]`). */
export function reportVersions(ctx: CliContext, key: string, { where, versions }: { where: string; versions: readonly VersionMeta[] }, json: boolean | undefined): void {
  if (json) return writeJson(ctx, versions);
  if (versions.length === 0) throw new DeployError(`no state "${key}" in ${where}`, ExitCode.usage, { hint: '`deploy state list` shows the keys' });
  const rows = [['SERIAL', 'TIME', 'SIZE', 'LINEAGE', 'SHA256']];
  for (const v of versions) rows.push([String(v.serial), v.created, v.deleted ? 'deleted' : String(v.size), v.lineage, v.deleted ? '-' : v.sha256.slice(0, 12)]);
  ctx.stdout.write(table(rows));
}

/** `deploy state show`: the redacted document, and how many values were hidden (log). */
export function reportState(ctx: CliContext, { doc, hidden }: { doc: unknown; hidden: number }): void {
  writeJson(ctx, doc);
  if (hidden > 0) ctx.logger().info({ kind: 'state-redacted', hidden }, `${hidden} secret value(s) hidden`);
}

/** `deploy state unlock`: one line per released lock, said as it is released. */
export function reportReleased(ctx: CliContext, { key, id, holder, stale }: ReleasedLock): void {
  ctx.stdout.write(`released lock ${id} on "${key}"${holder ? ` (${describeLock(holder)})` : ''}${stale ? `: ${stale}` : ''}\n`);
  ctx.logger().warn({ kind: 'state-unlocked', key, id, who: holder?.Who, stale: stale !== undefined }, 'lock released by operator');
}

/** `deploy state unlock --force-stale`: a held lock left alone, and why (stderr). */
export function reportKept(ctx: CliContext, { key, info, why }: KeptLock): void {
  ctx.stderr.write(`kept lock ${info.ID} on "${key}" (${describeLock(info)}): ${why}\n`);
}

/** `deploy state unlock --force-stale` that found no stale lock. */
export function reportNothingStale(ctx: CliContext, key: string | undefined, where: string): void {
  ctx.stdout.write(`no stale lock${key ? ` on "${key}"` : ''} in ${where}: nothing to release\n`);
}

/** `deploy state unlock --held-by <who>` that found none of that run's locks. */
export function reportNothingReleased(ctx: CliContext, who: string, key: string | undefined, where: string): void {
  ctx.stdout.write(`no lock held by ${who}${key ? ` on "${key}"` : ''} in ${where}: nothing to release\n`);
}

/** `deploy state migrate`: one key's outcome, said as it is decided (text only; JSON comes at the end). */
export function reportOutcome(ctx: CliContext, outcome: KeyOutcome, json: boolean | undefined): void {
  ctx.logger().info({ kind: 'state-migrated', ...outcome }, `${outcome.key}: ${outcome.result}`);
  if (!json) ctx.stdout.write(`${describeOutcome(outcome)}\n`);
}

/** `deploy state migrate`, at the end: JSON, the next steps, and exit 2 when a state was refused. */
export function reportMigration(ctx: CliContext, { from, to, outcomes }: MigrateResult, json: boolean | undefined): void {
  if (outcomes.length === 0) {
    ctx.stderr.write(`no states in ${from}: nothing to migrate\n`);
    if (json) ctx.stdout.write('[]\n');
    return;
  }
  if (json) writeJson(ctx, outcomes);
  const refused = outcomes.filter((o) => o.result === 'refused');
  ctx.stderr.write(nextSteps(from, to, refused.length));
  if (refused.length > 0) {
    throw new DeployError(`${refused.length} of ${outcomes.length} states were not migrated: ${refused.map((r) => r.key).join(', ')}`, ExitCode.usage, {
      hint: 'each refused state is named above with the reason; the others were copied (or were already there)',
    });
  }
}

function describeOutcome(o: KeyOutcome): string {
  switch (o.result) {
    case 'copied':
      return `${o.key}: copied serial ${o.serial} (lineage ${o.lineage})${o.replaced ? `, over serial ${o.replaced.serial} of the same lineage` : ''}`;
    case 'already-there':
      return `${o.key}: already at the target (serial ${o.serial}, same bytes): nothing to do`;
    case 'refused':
      return `${o.key}: refused: ${o.reason}`;
  }
}

function nextSteps(from: string, to: string, refused: number): string {
  return [
    '',
    refused > 0 ? 'Then, for the states that were migrated:' : 'Next: point every run at the new backend and check that nothing changes:',
    `  export TF_HTTP_ADDRESS=${to}    # and TF_HTTP_USERNAME/TF_HTTP_PASSWORD when it asks for them`,
    '  deploy plan --plan <group plan> --target <target>    # each target: "no changes"',
    `The states stay in ${from} as they were; runs without TF_HTTP_ADDRESS would still use them, so do not run deploy there again.`,
    '',
  ].join('\n');
}

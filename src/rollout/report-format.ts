/**
 * The rollout report for people: one line per node (what it runs now and why) and the
 * evidence of each failure, as `deploy rollout` and `deploy apply` print them.
 */
import type { RolloutReport } from './report.js';

/** `sha256:0123456789ab` from `<registry>/<ns>/<n>@sha256:...` (the whole ref otherwise). */
export function shortImage(image: string | null): string {
  if (!image) return 'unknown image';
  const at = image.lastIndexOf('@');
  if (at < 0) return image;
  const digest = image.slice(at + 1);
  return digest.startsWith('sha256:') ? digest.slice(0, 'sha256:'.length + 12) : digest;
}

function seconds(ms: number | null): string {
  return ms === null ? '?' : `${(ms / 1000).toFixed(1)}s`;
}

/** One line per node: what the node runs now and why. */
export function formatRolloutLine(r: RolloutReport): string {
  const where = `${r.namespace}/${r.node}`;
  switch (r.outcome) {
    case 'ready':
      return `${where}: ready (${shortImage(r.image)}) in ${seconds(r.durations.waitMs)}`;
    case 'rolled-back':
      return `${where}: rolled back to ${shortImage(r.previousImage)} because ${r.message}`;
    case 'failed-no-previous':
      return `${where}: FAILED: ${r.message}`;
    case 'rollback-failed':
      return `${where}: FAILED and the rollback to ${shortImage(r.previousImage)} failed too: ${r.message}`;
    case 'interrupted':
      return `${where}: interrupted: ${r.message}`;
  }
}

/** The summary `deploy apply` prints: one line per node, then the evidence of each failure. */
export function formatRolloutSummary(reports: readonly RolloutReport[]): string {
  if (reports.length === 0) return 'No rollout ran (no Deployment changed).\n';
  const lines = reports.map(formatRolloutLine);
  for (const r of reports) {
    if (r.outcome === 'ready') continue;
    lines.push('', ...formatRolloutEvidence(r));
  }
  return `${lines.join('\n')}\n`;
}

/** The evidence of one failed rollout, for people (at most ~30 lines). */
export function formatRolloutEvidence(r: RolloutReport): string[] {
  const out = [`${r.namespace}/${r.node}: ${r.reason}`];
  out.push(`  tried:       ${r.image ?? 'unknown'}`);
  out.push(`  previous:    ${r.previousImage ?? 'none (first deploy)'}`);
  if (r.failedUnits.length > 0) out.push(`  failed units: ${r.failedUnits.join(', ')}`);
  if (r.lastState) {
    const s = r.lastState;
    const term = s.lastTerminated ? `; last exit ${s.lastTerminated.exitCode}${s.lastTerminated.reason ? ` (${s.lastTerminated.reason})` : ''}` : '';
    out.push(`  pod:         ${s.pod} ${s.phase ?? ''}, container ${s.container ?? 'not created'}, restarts ${s.restartCount}${s.systemdState ? `, systemd ${s.systemdState}` : ''}${term}`);
  }
  if (r.systemdJobs.length > 0) {
    out.push(`  systemd jobs: ${r.systemdJobs.slice(0, 6).map((j) => `${j.unit} ${j.type} ${j.state}`).join(', ')}${r.systemdJobs.length > 6 ? ', ...' : ''}`);
  }
  if (r.events.length > 0) {
    out.push('  events:');
    for (const e of r.events.slice(-8)) {
      const msg = e.message.split('\n')[0] ?? '';
      out.push(`    ${e.time ?? '?'} ${e.type} ${e.reason} ${e.object}${e.count > 1 ? ` (x${e.count})` : ''}: ${msg}`);
    }
  }
  if (r.logTail.length > 0) {
    out.push('  log (last lines):');
    for (const l of r.logTail.slice(-10)) out.push(`    ${l}`);
  }
  return out;
}

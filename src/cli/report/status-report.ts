/**
 * What `deploy status` says: per target a header (namespace, state serial, lock) and one row
 * per node, a sentence under the table for each node that differs, and a last line with the
 * verdict; or, with --json, the one document described in docs/status-and-history.md.
 */
import type { LockView, StatusResult, TargetStatus } from '../../workflow/status/status.js';
import { shortDigest, type NodeStatus } from '../../workflow/status/status-judge.js';
import type { CliContext } from '../context.js';
import { table } from './table.js';

/** `5s`, `12m`, `3h`, `2d`: a pod's age at a glance. */
export function formatAge(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

function lockWords(lock: LockView): string {
  if (lock.state === 'free') return 'lock: free';
  if (lock.state === 'unknown') return 'lock: unknown (the backend does not list its states)';
  return `LOCKED by ${lock.who ?? '?'}${lock.operation ? ` for ${lock.operation}` : ''}${lock.created ? ` since ${lock.created}` : ''} (ID ${lock.id})`;
}

function row(n: NodeStatus): string[] {
  const c = n.cluster;
  const last = n.lastRollout;
  return [
    n.node,
    n.mark === 'ok' ? 'ok' : n.mark.toUpperCase(),
    n.state ? shortDigest(n.state.image) : '-',
    // what runs: the pod's image by digest, else what its Deployment asks for
    c ? shortDigest(c.runningImage ?? c.image) : 'gone',
    c ? (c.pod ? (c.ready ? 'yes' : 'no') : 'no pod') : '-',
    c?.restarts === null || c === null ? '-' : String(c.restarts),
    formatAge(c?.podAgeSeconds ?? null),
    last ? `${last.outcome} ${last.at}${last.outcome === 'ready' ? '' : ` (${last.reason})`}` : 'no report on the Deployment',
  ];
}

function targetText(t: TargetStatus): string {
  const head = `target ${t.target}: namespace ${t.namespace ?? '?'}, state ${t.stateKey} serial ${t.serial ?? '?'}${t.updated ? ` (stored ${t.updated})` : ''}, ${lockWords(t.lock)}\n`;
  const rows = [['NODE', 'MARK', 'STATE IMAGE', 'RUNNING', 'READY', 'RESTARTS', 'POD AGE', 'LAST ROLLOUT'], ...t.nodes.map(row)];
  const lines = table(rows).replace(/^/gm, '  ').replace(/ +$/gm, '');
  const words = t.nodes.filter((n) => n.words).map((n) => `  ${n.node}: ${n.words}\n`);
  const pending = t.notApplied.length > 0 ? [`  in the plan, not applied yet: ${t.notApplied.join(', ')} (deploy plan shows what apply would do)\n`] : [];
  return head + lines + words.join('') + pending.join('');
}

/** The text form: one block per target, then the verdict. */
export function formatStatus(r: StatusResult): string {
  const blocks = r.targets.map(targetText);
  if (r.notDeployed.length > 0) blocks.push(`not deployed (no state with a node): ${r.notDeployed.join(', ')}\n`);
  const nodes = r.targets.flatMap((t) => t.nodes);
  const bad = r.targets.flatMap((t) => t.nodes.filter((n) => n.mark !== 'ok').map((n) => (r.targets.length > 1 ? `${t.target}/${n.node}` : n.node)));
  const verdict =
    bad.length === 0
      ? `status: ok, every node (${nodes.length}) is ready and runs the image its state holds\n`
      : `status: ${bad.length} of ${nodes.length} nodes differ: ${bad.join(', ')} (exit ${r.exitCode})\n`;
  return [...blocks, verdict].join('\n');
}

export function reportStatus(ctx: CliContext, r: StatusResult, json: boolean | undefined): void {
  if (json) {
    ctx.stdout.write(`${JSON.stringify({ verb: 'status', exitCode: r.exitCode, healthy: r.exitCode === 0, group: r.group, stateSource: r.where, cluster: r.cluster, targets: r.targets, notDeployed: r.notDeployed }, null, 2)}\n`);
  } else {
    ctx.stdout.write(formatStatus(r));
  }
}

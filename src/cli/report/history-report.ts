/**
 * What `deploy history` says: one row per kept version of the state (serial, time, what
 * changed per node), then when each node's image last changed; or, with --json, the one
 * document described in docs/status-and-history.md.
 */
import type { HistoryResult, NodeChange } from '../../workflow/status/history.js';
import { shortDigest } from '../../workflow/status/status-judge.js';
import type { CliContext } from '../context.js';
import { table } from './table.js';

function changeWords(c: NodeChange): string {
  switch (c.change) {
    case 'added':
      return `${c.node}: added, image ${shortDigest(c.image)}${c.tag ? ` (tag ${c.tag})` : ''}`;
    case 'removed':
      return `${c.node}: removed`;
    case 'image': {
      const tags = c.fromTag !== c.toTag ? ` (tag ${c.fromTag ?? '?'} -> ${c.toTag ?? '?'})` : '';
      return `${c.node}: image ${shortDigest(c.from)} -> ${shortDigest(c.to)}${tags}`;
    }
    case 'rollout-failed':
      return `${c.node}: its rollout failed (step tainted; deploy status says what runs)`;
    case 'rollout-passed':
      return `${c.node}: its rollout passed after a failure`;
    case 'machine-id':
      return `${c.node}: NEW MACHINE ID`;
    case 'claim':
      return `${c.node}: /var/lib claim made again (empty)`;
  }
}

export function formatHistory(r: HistoryResult): string {
  const rows = [['SERIAL', 'TIME', 'CHANGES']];
  for (const v of r.versions) {
    const words = v.deleted ? ['state deleted'] : v.unreadable ? ['(not a state of deploy\'s graphs)'] : v.changes.length === 0 ? ['no node changed'] : v.changes.map(changeWords);
    rows.push([String(v.serial), v.created, words[0]!]);
    for (const w of words.slice(1)) rows.push(['', '', w]);
  }
  const last = r.lastImageChange.map((l) => `  ${l.node}: ${shortDigest(l.image)} since serial ${l.serial} (${l.created})\n`);
  const lastLines = last.length > 0 ? `last image change per node (as applied; deploy status says what runs now):\n${last.join('')}` : '';
  return `history of target ${r.target} (state ${r.stateKey} in ${r.where}), oldest first:\n${table(rows)}${lastLines}`;
}

export function reportHistory(ctx: CliContext, r: HistoryResult, json: boolean | undefined): void {
  ctx.stdout.write(json ? `${JSON.stringify({ verb: 'history', ...r }, null, 2)}\n` : formatHistory(r));
}

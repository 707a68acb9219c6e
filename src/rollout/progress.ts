/**
 * Progress of one node's rollout on stderr: on a TTY one line that updates in place (phase,
 * systemd state, elapsed/deadline); otherwise a plain line whenever the phase or the systemd
 * state changes, and a "still ..." line every 30 s, so CI logs stay short.
 */
import type { Writable } from 'node:stream';
import type { Verdict } from './classify.js';

export type RolloutStage = 'rollout' | 'rollback';

export interface Progress {
  show(stage: RolloutStage, v: Verdict, elapsedMs: number, limitMs: number): void;
  /** Ends the updating line (TTY) before other output. */
  end(): void;
}

const HEARTBEAT_MS = 30_000;

export function describeVerdict(v: Verdict): string {
  switch (v.kind) {
    case 'ready':
      return `ready (${v.pod})`;
    case 'waiting':
      return `${v.phase}${v.systemdState && !v.detail.includes(`systemd: ${v.systemdState}`) ? ` [systemd: ${v.systemdState}]` : ''}: ${v.detail}`;
    case 'failed':
      return `failed (${v.reason}): ${v.message}`;
  }
}

export function createProgress(stream: Writable & { isTTY?: boolean; columns?: number }, node: string, opts: { tty?: boolean } = {}): Progress {
  const tty = opts.tty ?? Boolean(stream.isTTY);
  let open = false;
  let lastKey = '';
  let lastPrinted = 0;
  return {
    show(stage, v, elapsedMs, limitMs) {
      const prefix = stage === 'rollback' ? `${node}: rolling back: ` : `${node}: `;
      const clock = `${Math.floor(elapsedMs / 1000)}s/${Math.round(limitMs / 1000)}s`;
      const text = `${prefix}${describeVerdict(v).split('\n')[0]} ${clock}`;
      if (tty) {
        const width = Math.max(20, (stream.columns ?? 120) - 1);
        stream.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
        open = true;
        return;
      }
      const key = `${stage}|${v.kind}|${v.kind === 'waiting' ? `${v.phase}|${v.systemdState ?? ''}` : ''}`;
      if (key !== lastKey || elapsedMs - lastPrinted >= HEARTBEAT_MS) {
        stream.write(`${key === lastKey ? `${prefix}still ` : prefix}${describeVerdict(v).split('\n')[0]} ${clock}\n`);
        lastKey = key;
        lastPrinted = elapsedMs;
      }
    },
    end() {
      if (open) stream.write('\n');
      open = false;
    },
  };
}

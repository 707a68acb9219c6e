/**
 * The run's view without a terminal (CI, a pipe): one line per change of a node's or a
 * target's state, `[  12s] [all] mail: Deployment created`, and the run's notes as they come.
 */
import { createRunRows } from './run-rows.js';
import type { RunView } from './run-view.js';

/** `[  12s] `: the time since the run began, as every line of the run has it. */
export function clockPrefix(started: number, now: number): string {
  return `[${((now - started) / 1000).toFixed(0).padStart(4)}s] `;
}

export function createPlainView(writeLine: (line: string) => void, opts: { started: number; now?: () => number }): RunView {
  const now = opts.now ?? Date.now;
  const rows = createRunRows();
  return {
    note(line) {
      writeLine(`${clockPrefix(opts.started, now())}${line}`);
    },
    planned(plan) {
      rows.apply({ kind: 'planned', at: now(), plan });
    },
    tofu(target, event) {
      const at = now();
      for (const s of rows.apply({ kind: 'tofu', at, target, event })) writeLine(`${clockPrefix(opts.started, at)}[${target}] ${s.line}`);
    },
    ended(target, ok) {
      const at = now();
      for (const s of rows.apply({ kind: 'ended', at, target, ok })) writeLine(`${clockPrefix(opts.started, at)}[${target}] ${s.line}`);
    },
    setBack(target, node, step) {
      const at = now();
      for (const s of rows.apply({ kind: 'set-back', at, target, node, step })) writeLine(`${clockPrefix(opts.started, at)}[${target}] ${s.line}`);
    },
    close() {},
  };
}

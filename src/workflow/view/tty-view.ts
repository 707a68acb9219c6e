/**
 * The run's view on a terminal: the rows of run-rows.ts redrawn in place below the run's notes,
 * one line each, cut at the terminal's width, coloured unless NO_COLOR.
 *
 * The in-place drawing is log-update's (sindresorhus/log-update: it diffs the frames and
 * rewrites only the lines that changed). The cursor stays visible: hiding it makes log-update
 * install signal-exit's SIGINT/SIGTERM handlers to show it again, and deploy's interrupt
 * handling (law 7) must stay the only one.
 */
import type { Writable } from 'node:stream';
import { styleText } from 'node:util';
import { createLogUpdate } from 'log-update';
import { clockPrefix } from './plain-view.js';
import { createRunRows, formatElapsed, type Row, type RowStatus } from './run-rows.js';
import type { RunView } from './run-view.js';

/** How often the elapsed times move, and the least time between two frames. */
const TICK_MS = 1000;
const FRAME_MS = 80;

type Style = Parameters<typeof styleText>[0];
const STATUS_STYLE: Record<RowStatus, Style> = { planned: 'dim', active: 'yellow', ok: 'green', bad: 'red', unchanged: 'dim' };

export interface FrameOptions {
  readonly now: number;
  /** The terminal's columns: every line is cut to fit (no wrapping, which would break the redraw). */
  readonly width: number;
  readonly colour: boolean;
}

/** Cuts `text` to `width` characters, the last one an ellipsis when something was cut. */
export function fitWidth(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** The time a row shows: in its current state while on its way, its total once it ended. */
function elapsedOf(r: Row, now: number): string {
  if (r.status === 'planned' || r.status === 'unchanged') return '';
  if (r.endedAt !== undefined) return formatElapsed(r.endedAt - (r.startedAt ?? r.since));
  return formatElapsed(now - r.since);
}

/**
 * The frame: per target its row (`[all] namespace x`), then a line per node, each
 * `<label>  <elapsed>  <words>  <detail or the step's last output>`. Pure.
 */
export function renderRows(rows: readonly Row[], o: FrameOptions): string {
  const labelOf = (r: Row) => (r.node === undefined ? `[${r.target}] ${r.label}` : `  ${r.label}`);
  const labelWidth = Math.max(0, ...rows.map((r) => labelOf(r).length));
  const paint = (style: Style, text: string) => (o.colour && text ? styleText(style, text, { validateStream: false }) : text);
  return rows
    .map((r) => {
      const head = `${labelOf(r).padEnd(labelWidth)}  ${elapsedOf(r, o.now).padStart(6)}  `;
      const extra = r.output || r.detail;
      const plain = fitWidth(`${head}${r.words}${extra ? `  ${extra}` : ''}`, Math.max(10, o.width - 1));
      if (!o.colour) return plain;
      // colour the words (and dim the rest) on the cut text, so the cut never splits a colour code
      const words = plain.slice(head.length, head.length + r.words.length);
      const rest = plain.slice(head.length + words.length);
      return `${plain.slice(0, head.length)}${paint(STATUS_STYLE[r.status], words)}${paint('dim', rest)}`;
    })
    .join('\n');
}

export function createTtyView(stream: Writable & { columns?: number }, opts: { colour: boolean; started: number; now?: () => number }): RunView {
  const now = opts.now ?? Date.now;
  const rows = createRunRows();
  const draw = createLogUpdate(stream, { showCursor: true });
  let timer: NodeJS.Timeout | undefined;
  let pending: NodeJS.Timeout | undefined;
  let closed = false;
  const frame = () => renderRows(rows.rows(), { now: now(), width: stream.columns ?? 80, colour: opts.colour });
  const redraw = () => {
    if (pending !== undefined) clearTimeout(pending);
    pending = undefined;
    if (!closed && rows.rows().length > 0) draw(frame());
  };
  const soon = () => {
    pending ??= setTimeout(redraw, FRAME_MS).unref();
  };
  return {
    note(line) {
      if (closed) {
        stream.write(`${line}\n`);
        return;
      }
      // above the rows, kept in the scrollback, whole (an error's words are never cut)
      draw.persist(`${clockPrefix(opts.started, now())}${line}`);
      redraw();
    },
    planned(plan) {
      rows.apply({ kind: 'planned', at: now(), plan });
      timer ??= setInterval(redraw, TICK_MS).unref();
      redraw();
    },
    tofu(target, event) {
      if (rows.apply({ kind: 'tofu', at: now(), target, event }).length > 0) soon();
    },
    ended(target, ok) {
      rows.apply({ kind: 'ended', at: now(), target, ok });
      redraw();
    },
    setBack(target, node, step) {
      if (rows.apply({ kind: 'set-back', at: now(), target, node, step }).length > 0) soon();
    },
    close() {
      if (closed) return;
      redraw();
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      if (pending !== undefined) clearTimeout(pending);
      draw.done();
    },
  };
}

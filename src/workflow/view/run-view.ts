/**
 * The view of a plan/apply/destroy run on stderr: on a terminal, one line per node and one per
 * target, redrawn in place (tty-view.ts); anywhere else (CI, a pipe), a plain line per change
 * of state (plain-view.ts). Both read the same rows (run-rows.ts).
 */
import type { Writable } from 'node:stream';
import type { TofuEvent } from '../../tools/tofu-events.js';
import type { PlannedTarget } from './run-rows.js';

export interface RunView {
  /** A line about the run (tofu init, a lock wait, a warning, an error): kept as is. */
  note(line: string): void;
  /** What a target is about to apply: its rows appear. */
  planned(plan: PlannedTarget): void;
  /** One of tofu's events of the target's apply (or plan, init). */
  tofu(target: string, event: TofuEvent): void;
  /** The target's apply ended (ok: tofu succeeded): a row still on its way is done, or stopped. */
  ended(target: string, ok: boolean): void;
  /** Ends the view; a terminal keeps the last rows on screen. */
  close(): void;
}

/** Colour only on a terminal and never with NO_COLOR (https://no-color.org: set and not empty). */
export function wantsColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/**
 * The live view on a terminal, plain lines elsewhere; plain lines also under CI (`CI` set and
 * not empty), whose log keeps every byte: act's host runner gives each step a terminal (and
 * sets CI=true), and a CI log viewer does not redraw lines in place.
 */
export function wantsLiveView(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && env.TERM !== 'dumb' && !env.CI;
}

/** The live view on a terminal, plain lines elsewhere (wantsLiveView). */
export async function openRunView(stream: Writable & { isTTY?: boolean }, env: NodeJS.ProcessEnv, started: number): Promise<RunView> {
  if (wantsLiveView(stream, env)) {
    const { createTtyView } = await import('./tty-view.js');
    return createTtyView(stream, { colour: wantsColour(stream, env), started });
  }
  const { createPlainView } = await import('./plain-view.js');
  return createPlainView((line) => stream.write(`${line}\n`), { started });
}

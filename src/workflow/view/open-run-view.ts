/**
 * Which view a run gets (run-view.ts is the interface both implement): the live one on a
 * terminal, plain lines elsewhere.
 */
import type { Writable } from 'node:stream';
import type { RunView } from './run-view.js';

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

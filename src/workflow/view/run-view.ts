/**
 * The view of a plan/apply/destroy run on stderr: on a terminal, one line per node and one per
 * target, redrawn in place (tty-view.ts); anywhere else (CI, a pipe), a plain line per change
 * of state (plain-view.ts). Both read the same rows (run-rows.ts); open-run-view.ts picks one.
 */
import type { TofuEvent } from '../../tools/tofu/tofu-events.js';
import type { PlannedTarget, SetBackStep } from './run-rows.js';

export interface RunView {
  /** A line about the run (tofu init, a lock wait, a warning, an error): kept as is. */
  note(line: string): void;
  /** What a target is about to apply: its rows appear. */
  planned(plan: PlannedTarget): void;
  /** One of tofu's events of the target's apply (or plan, init). */
  tofu(target: string, event: TofuEvent): void;
  /** The target's apply ended (ok: tofu succeeded): a row still on its way is done, or stopped. */
  ended(target: string, ok: boolean): void;
  /** A node of the group's rollback (--on-failure group), after the target's apply ended: its row shows the way back. */
  setBack(target: string, node: string, step: SetBackStep): void;
  /** Ends the view; a terminal keeps the last rows on screen. */
  close(): void;
}

import type { HeldLocks } from '../state/held-locks.js';
import type { RunContext } from '../workflow/run-context.js';

/** What every verb gets from the entry point: its streams, environment, logger and signal. */
export interface CliContext extends RunContext {
  /** A verb sets the exit code of a run that finished without throwing (e.g. rollout). */
  exitCode: number;
  /**
   * The locks the run holds now (src/cli/shutdown.ts names them when a second signal makes the
   * run leave at once); a verb records each lock it takes while it holds it.
   */
  readonly held: HeldLocks;
}

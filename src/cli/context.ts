import type { RunContext } from '../workflow/run-context.js';

/** What every verb gets from the entry point: its streams, environment, logger and signal. */
export interface CliContext extends RunContext {
  /** A verb sets the exit code of a run that finished without throwing (e.g. rollout). */
  exitCode: number;
}

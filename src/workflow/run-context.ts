import type { HeldLocks } from '../state/held-locks.js';
import type { Writable } from 'node:stream';
import type { Logger } from '../log.js';

/**
 * What a verb's workflow gets from its caller: the streams it reports on, the environment it
 * reads (never process.env), where relative paths resolve, its logger and the run's signal.
 * src/cli/context.ts's CliContext is one.
 */
export interface RunContext {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Created on first use so `--help` does not pay for pino. */
  logger(): Logger;
  /** Aborted on the first SIGINT/SIGTERM/SIGHUP; passed to every wait and child process. */
  readonly signal: AbortSignal;
  /** Where the run records the locks it holds, so that a second signal names them (src/cli/shutdown.ts). */
  readonly held?: HeldLocks | undefined;
}

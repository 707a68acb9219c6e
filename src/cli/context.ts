import type { Writable } from 'node:stream';
import type { Logger } from '../log.js';

/** What every verb gets from the entry point: its streams, environment and logger. */
export interface CliContext {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Created on first use so `--help` does not pay for pino. */
  logger(): Logger;
  /** Aborted on the first SIGINT/SIGTERM/SIGHUP; verbs pass it to every wait and child process. */
  readonly signal: AbortSignal;
  /** A verb sets the exit code of a run that finished without throwing (e.g. rollout). */
  exitCode: number;
}

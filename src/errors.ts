/**
 * The few error classes of the program. Each carries the exit code it maps to, a hint (what
 * to do next) and the cause. Only src/cli/main.ts turns them into an exit.
 */

/** Exit codes, documented in the README ("Exit codes"). */
export const ExitCode = {
  ok: 0,
  /** A bug or an unexpected failure; the message says what happened. */
  internal: 1,
  /** Bad input: flags, environment, the group plan. Nothing was changed. */
  usage: 2,
  /** A tool or the cluster failed: tofu, skopeo, the state backend, the API server. */
  tool: 3,
  /** The rollout failed and the Deployment was set back to the previous revision. */
  rolledBack: 4,
  /** The rollout failed and there was nothing to set back (a first deploy, or a Deployment made again). */
  failedNoPrevious: 5,
  /** The rollout failed and setting the Deployment back failed too. */
  rollbackFailed: 6,
  /**
   * `deploy status`: a node is not ready, or does not run the image its state holds (rolled
   * back, drift, its Deployment gone). No rollout failed now: nothing was changed.
   */
  unhealthy: 7,
  /** Interrupted (SIGINT/SIGTERM); the message says what state things were left in. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface ErrorDetails {
  /** What to do next, in one or two sentences. */
  hint?: string;
  cause?: unknown;
}

export class DeployError extends Error {
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  constructor(message: string, exitCode: ExitCode, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.hint = details.hint;
  }
}

/**
 * The hint of `cause` when it is one of ours (it knows best what to do), else `fallback`: for
 * an error that wraps another with where it happened.
 */
export function hintOf(cause: unknown, fallback?: string): string | undefined {
  return (cause instanceof DeployError && cause.hint) || fallback;
}

/** One problem of the input, with where it is (`file:json.path`, an env var, a flag). */
export interface InputIssue {
  where: string;
  message: string;
}

/** Bad input: every problem found, at once. Nothing has been written. */
export class ConfigError extends DeployError {
  readonly issues: readonly InputIssue[];
  constructor(summary: string, issues: readonly InputIssue[], details: ErrorDetails = {}) {
    const lines = issues.map((i) => `  - ${i.where}: ${i.message}`);
    super([summary, ...lines].join('\n'), ExitCode.usage, details);
    this.issues = issues;
  }
}

/** A program this needs is missing, or a program failed. */
export class ToolError extends DeployError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.tool, details);
  }
}

/** The run was interrupted by the operator. */
export class InterruptedError extends DeployError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.interrupted, details);
  }
}

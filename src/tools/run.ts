/**
 * The one process wrapper: every program `deploy` starts goes through `runTool`.
 *
 * - arguments are an array (never a shell string), so nothing is re-parsed by a shell;
 * - every run has a deadline and honours an AbortSignal;
 * - output reaches the caller line by line while the program runs, and is kept (bounded) for
 *   the result and for error messages;
 * - a missing program and a failed program are ToolErrors that say which program, the
 *   command, and at most the last 20 relevant output lines.
 *
 * Interrupts: OpenTofu treats the first SIGINT as "stop after the operations in flight and
 * save state", and a second one as "exit now, abandoning state"
 * (https://opentofu.org/docs/cli/commands/apply/ , "Interrupting"). With `interrupt:
 * 'sigint-once'` the child runs in its own process group, so a Ctrl-C on the terminal (which
 * signals the whole foreground group) does not reach it directly; the first abort is
 * forwarded as exactly ONE SIGINT, and then the wrapper waits, up to `interruptGraceMs`, for
 * the child to exit by itself before it is killed.
 *
 * No process outlives its run (issue 50): every child carries the run's mark in its
 * environment (run-mark.ts), which tofu and everything it starts inherit, and the first child
 * of a deploy process starts the run guardian (run-guardian.ts), which ends every process with
 * the mark once deploy is gone, even after a kill -9; and the reaper, which ends what runs
 * killed together with their guardian left behind (stale-runs.ts). A run that starts no
 * process (the verified no-op plan) starts neither. docs/decisions.md says why this way.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import type { ResultPromise } from 'execa';
import { InterruptedError, ToolError } from '../errors.js';
import { isDirectory } from './file-checks.js';

/** How an abort or a deadline reaches the child. */
export type InterruptMode =
  /** SIGTERM, then SIGKILL after the grace period (ordinary programs). */
  | 'terminate'
  /** One SIGINT, then wait for the child to exit (tofu); SIGKILL only after the grace period. */
  | 'sigint-once';

export interface RunOptions {
  /** Extra environment, merged over the current process environment (unless `extendEnv: false`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default true */
  readonly extendEnv?: boolean;
  readonly cwd?: string;
  /** Written to the child's stdin (e.g. a token: secrets go through pipes, never argv). */
  readonly input?: string | Uint8Array;
  /** Aborting it interrupts the child (see `interrupt`). */
  readonly signal?: AbortSignal;
  /** Deadline for the whole run; when it passes, the child is interrupted like on abort. */
  readonly timeoutMs: number;
  /** @default 'terminate' */
  readonly interrupt?: InterruptMode;
  /**
   * With `interrupt: 'sigint-once'`: send the one SIGINT to the child only ('process'), or to
   * its whole process group ('group': the child and everything it started, e.g. the commands
   * of tofu's local-exec steps, each get exactly one). The SIGKILL after the grace period goes
   * to the same target. @default 'process'
   */
  readonly interruptTarget?: 'process' | 'group';
  /**
   * How long to wait for the child to exit after it was interrupted, before SIGKILL.
   * @default 10_000
   */
  readonly interruptGraceMs?: number;
  /** Called with each line of stdout / stderr (without the newline) as it arrives. */
  readonly onStdoutLine?: (line: string) => void;
  readonly onStderrLine?: (line: string) => void;
  /** Exit codes that are not failures (e.g. 2 for `tofu plan -detailed-exitcode`). @default [0] */
  readonly okExitCodes?: readonly number[];
  /**
   * Whether a failed exit throws a ToolError. When false, the result is returned and the
   * caller explains the failure (a missing program, a deadline and an interrupt still throw).
   * @default true
   */
  readonly reject?: boolean;
  /** How to get the program, for the "not found" message. */
  readonly installHint?: string;
  /** Which output lines matter for an error message. @default non-empty lines */
  readonly relevantLine?: (line: string, stream: 'stdout' | 'stderr') => boolean;
  /** Keep stdout in the result. @default true (up to `maxBufferChars`) */
  readonly keepStdout?: boolean;
  /** @default 64 MiB of characters per stream */
  readonly maxBufferChars?: number;
}

export interface RunResult {
  /** The command line, for messages (program and arguments, space separated). */
  readonly command: string;
  readonly exitCode: number;
  /** Set when the child ended by a signal. */
  readonly signal: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  /** The last relevant lines of the output (both streams, in arrival order), at most 20. */
  readonly tail: readonly string[];
}

/** At most this many output lines go into an error message (house style). */
export const MAX_ERROR_LINES = 20;

const DEFAULT_GRACE_MS = 10_000;
const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;

/** Runs `file args` and resolves when it has exited. See RunOptions. */
export async function runTool(file: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const command = formatCommand(file, args);
  const program = programName(file);
  // execa and its dependencies are ~140 modules: loaded at the first process, so a run that
  // starts none (the verified no-op plan, status) does not pay for them (bench/README.md, P10)
  const { execa } = await import('execa');
  const mark = await guardRun();
  if (opts.signal?.aborted) {
    throw new InterruptedError(`${program} was not started: the run was interrupted`);
  }
  const mode = opts.interrupt ?? 'terminate';
  const graceMs = opts.interruptGraceMs ?? DEFAULT_GRACE_MS;
  const relevant = opts.relevantLine ?? ((line: string) => line.trim() !== '');
  const tail = new TailBuffer(MAX_ERROR_LINES);
  const started = Date.now();

  // A callback that throws is the caller's bug: it must not cut the child's output off (the
  // child would die of SIGPIPE mid-apply) nor be lost (execa ends such a run as "exit 0").
  // The lines keep flowing; the first such error is thrown once the child has exited.
  let callbackError: { error: unknown } | undefined;
  const lineHandler = (stream: 'stdout' | 'stderr', cb: ((line: string) => void) | undefined) =>
    function* (line: unknown) {
      const text = String(line);
      if (relevant(text, stream)) tail.push(text);
      try {
        cb?.(text);
      } catch (error) {
        callbackError ??= { error };
      }
      yield text;
    };

  let subprocess: ResultPromise;
  try {
    subprocess = execa(file, [...args], {
      env: withRunMark(opts.env, mark),
      extendEnv: opts.extendEnv ?? true,
      cwd: opts.cwd,
      input: opts.input,
      // own process group: a terminal Ctrl-C must not reach the child besides our one SIGINT
      detached: mode === 'sigint-once',
      cleanup: mode !== 'sigint-once',
      forceKillAfterDelay: false,
      reject: false,
      stripFinalNewline: true,
      maxBuffer: opts.maxBufferChars ?? DEFAULT_MAX_BUFFER,
      buffer: { stdout: opts.keepStdout ?? true, stderr: true },
      stdin: opts.input === undefined ? 'ignore' : 'pipe',
      stdout: [lineHandler('stdout', opts.onStdoutLine)],
      stderr: [lineHandler('stderr', opts.onStderrLine)],
    });
  } catch (cause) {
    throw new ToolError(`could not start ${command}: ${(cause as Error).message}`, { cause });
  }

  // Interrupt handling: one signal, then a bounded wait, then SIGKILL.
  let interruptedBy: 'abort' | 'deadline' | undefined;
  let interruptedAt = 0;
  let killTimer: NodeJS.Timeout | undefined;
  const interruptChild = (why: 'abort' | 'deadline') => {
    if (interruptedBy) return; // exactly once
    interruptedBy = why;
    interruptedAt = Date.now();
    const toGroup = mode === 'sigint-once' && opts.interruptTarget === 'group' && subprocess.pid !== undefined;
    const send = (sig: NodeJS.Signals) => {
      if (toGroup) {
        try {
          process.kill(-subprocess.pid!, sig); // the child leads its own group (detached)
        } catch {
          // the group is gone already
        }
      } else {
        subprocess.kill(sig);
      }
    };
    send(mode === 'sigint-once' ? 'SIGINT' : 'SIGTERM');
    killTimer = setTimeout(() => send('SIGKILL'), graceMs);
    killTimer.unref();
  };
  const onAbort = () => interruptChild('abort');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const deadline = setTimeout(() => interruptChild('deadline'), opts.timeoutMs);
  deadline.unref();

  let result;
  try {
    result = await subprocess;
    // The group's leader has exited, but not always what it started: tofu's local-exec Stop
    // SIGKILLs a step's shell and leaves the step itself (which got its own SIGINT) winding
    // down. Wait for the whole group, within the grace (the SIGKILL timer above still ends
    // it), so that no process of the run outlives it: a rollout step still starting up wrote
    // its report into a run directory deploy had already removed, after deploy had exited.
    if (interruptedBy && mode === 'sigint-once' && opts.interruptTarget === 'group' && subprocess.pid !== undefined) {
      await groupGone(subprocess.pid, interruptedAt + graceMs + 1000);
    }
  } finally {
    clearTimeout(deadline);
    if (killTimer) clearTimeout(killTimer);
    opts.signal?.removeEventListener('abort', onAbort);
  }

  const out: RunResult = {
    command,
    exitCode: result.exitCode ?? -1,
    signal: result.signal ?? undefined,
    stdout: typeof result.stdout === 'string' ? result.stdout : '',
    stderr: typeof result.stderr === 'string' ? result.stderr : '',
    durationMs: Date.now() - started,
    tail: tail.lines(),
  };

  const code = (result as { code?: string }).code;
  if (code === 'ENOENT' && opts.cwd !== undefined && !isDirectory(opts.cwd)) {
    throw new ToolError(`could not start ${command}: its working directory ${opts.cwd} does not exist`, {
      hint: 'the directory was removed while deploy ran, or the path is wrong: run the command again',
      cause: result,
    });
  }
  if (code === 'ENOENT' || code === 'EACCES') {
    throw new ToolError(
      code === 'ENOENT' ? `${program} was not found (tried to run "${file}")` : `${program} is not executable ("${file}")`,
      { hint: opts.installHint ?? `install ${program} or put it on PATH`, cause: result },
    );
  }
  if (callbackError) throw callbackError.error;
  if (result.isMaxBuffer) {
    throw new ToolError(`${command} printed more than ${opts.maxBufferChars ?? DEFAULT_MAX_BUFFER} characters on one stream and was stopped (${describeEnd(out)})`, {
      hint: 'that is far more output than deploy expects from this command: run it by hand to see what it prints',
      cause: result,
    });
  }
  if (result.failed && result.exitCode === undefined && result.signal === undefined && !interruptedBy) {
    throw new ToolError(`${command} failed: ${result.shortMessage}`, { cause: result });
  }

  if (interruptedBy === 'abort') {
    throw new InterruptedError(
      withTail(`${command} was interrupted (${describeEnd(out)})`, out.tail),
      { cause: result },
    );
  }
  if (interruptedBy === 'deadline') {
    throw new ToolError(
      withTail(`${command} did not finish within ${formatMs(opts.timeoutMs)} and was stopped (${describeEnd(out)})`, out.tail),
      { hint: 'look at the output above; raise the time limit if the work is legitimately slow', cause: result },
    );
  }
  const ok = (opts.okExitCodes ?? [0]).includes(out.exitCode) && out.signal === undefined;
  if (!ok && (opts.reject ?? true)) {
    throw new ToolError(withTail(`${command} failed (${describeEnd(out)})`, out.tail), { cause: result });
  }
  return out;
}

/** `env` with the run's mark over it (with `extendEnv`, execa puts it over the process environment). */
function withRunMark(env: RunOptions['env'], mark: RunGuard | undefined): Record<string, string> | undefined {
  if (mark === undefined) return env as Record<string, string> | undefined;
  return { ...(env as Record<string, string> | undefined), [mark.variable]: mark.text };
}

/** The mark this process's children carry, and the variable that carries it. */
interface RunGuard {
  readonly variable: string;
  readonly text: string;
}

let runGuard: Promise<RunGuard | undefined> | undefined;

/**
 * The run's mark, and its guardian started: once per process, at its first child. A deploy
 * that a run started (the rollout step's `deploy rollout`, under tofu) keeps the outer run's
 * mark, whose guardian already watches it, and starts none; so does any process whose
 * inherited mark names a deploy that still runs. It reads the process's own environment, not
 * a caller's: the mark says which process this is a child of. Without /proc (not Linux)
 * children carry no mark and nothing is watched; when `sh` fails to start, they carry it and
 * only the next deploy's reaper will find them.
 */
function guardRun(): Promise<RunGuard | undefined> {
  runGuard ??= startRunGuard().catch(() => undefined);
  return runGuard;
}

async function startRunGuard(): Promise<RunGuard | undefined> {
  if (process.platform !== 'linux') return undefined;
  const { markOwnerRuns, newRunMark, ownPidNamespace, parseRunMark, RUN_MARK_VAR } = await import('./run-mark.js');
  const inherited = parseRunMark(process.env[RUN_MARK_VAR]);
  if (inherited && inherited.pidns === ownPidNamespace() && markOwnerRuns(inherited)) return { variable: RUN_MARK_VAR, text: inherited.text };
  const mark = newRunMark();
  if (mark === undefined) return undefined;
  const [{ spawn }, { guardianArgs }, { findStaleRunMarks }] = await Promise.all([
    import('node:child_process'),
    import('./run-guardian.js'),
    import('./stale-runs.js'),
  ]);
  // its stdin a pipe deploy never writes to, closed by the kernel however deploy ends; its own
  // session (detached: setsid), so that a terminal's Ctrl-C reaches deploy and tofu as before
  // and not it; unref'd both, so that it keeps no run from ending
  const guardian = startDetached(spawn, guardianArgs(mark.text), 'pipe');
  guardian?.stdin?.on('error', () => {});
  (guardian?.stdin as { unref?: () => void } | null | undefined)?.unref?.();
  // the backstop, in the background: a guardian with stdin at end of file for each run whose
  // deploy and guardian were both killed
  void findStaleRunMarks(mark, process.env[RUN_MARK_VAR])
    .then((stale) => {
      for (const s of stale) startDetached(spawn, guardianArgs(s.text), 'ignore');
    })
    .catch(() => {});
  return { variable: RUN_MARK_VAR, text: mark.text };
}

function startDetached(
  spawn: (file: string, args: readonly string[], options: SpawnOptions) => ChildProcess,
  args: readonly string[],
  stdin: 'pipe' | 'ignore',
): ChildProcess | undefined {
  try {
    const child = spawn('/bin/sh', args, {
      detached: true,
      stdio: [stdin, 'ignore', 'ignore'],
      // nothing of deploy's environment (it holds no mark, so it never finds itself)
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    child.on('error', () => {});
    child.unref();
    return child;
  } catch {
    return undefined;
  }
}

/** Resolves once no process of the group `pgid` is left (or at `until`, a time in ms). */
async function groupGone(pgid: number, until: number): Promise<void> {
  while (Date.now() < until) {
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Appends the last relevant output lines to a message. */
export function withTail(message: string, tail: readonly string[]): string {
  if (tail.length === 0) return message;
  const lines = tail.slice(-MAX_ERROR_LINES).map((l) => `  | ${l}`);
  return `${message}; last output:\n${lines.join('\n')}`;
}

function describeEnd(r: RunResult): string {
  return r.signal ? `killed by ${r.signal}` : `exit code ${r.exitCode}`;
}

function programName(file: string): string {
  const base = file.split('/').pop();
  return base && base !== '' ? base : file;
}

/** A readable command line; arguments with spaces are quoted. Never contains secrets (law 6). */
export function formatCommand(file: string, args: readonly string[]): string {
  return [file, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** The last N lines pushed. */
class TailBuffer {
  private readonly buf: string[] = [];
  constructor(private readonly max: number) {}
  push(line: string): void {
    this.buf.push(line);
    if (this.buf.length > this.max) this.buf.shift();
  }
  lines(): readonly string[] {
    return [...this.buf];
  }
}

/**
 * How every verb stops on a signal. The first SIGINT, SIGTERM or SIGHUP aborts the run's
 * signal: nothing new starts, while the requests that save state and free locks still run,
 * each on its own short deadline (src/state/source/http-client.ts; tofu gets its one SIGINT from
 * src/tools/run.ts and saves its state); the verb then ends with an InterruptedError that says
 * what was left undone, and the run exits 128 + the signal's number: 130, 143, 129 (the
 * shell's convention, so `deploy ...; echo $?` and CD runners read it as "interrupted").
 * A second signal leaves at once: it names each lock the run still holds
 * (src/state/held-locks.ts) with the exact command that frees it.
 */
import { shq } from '../contract/shell.js';
import { DeployError, InterruptedError } from '../errors.js';
import { HeldLocks } from '../state/held-locks.js';

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
export type StopSignal = keyof typeof SIGNAL_NUMBERS;
export const STOP_SIGNALS = Object.keys(SIGNAL_NUMBERS) as StopSignal[];

/** 128 + the signal's number. */
export function exitCodeOf(sig: StopSignal): number {
  return 128 + SIGNAL_NUMBERS[sig];
}

export interface ShutdownOptions {
  /** Writes to stderr (synchronous for a pipe or a file on Linux: the words get out before exit). */
  readonly write: (text: string) => void;
  readonly exit: (code: number) => void;
  /** The run's identity (its locks' Who), for the line said when no lock is recorded. */
  readonly who?: (() => Promise<string | undefined>) | undefined;
}

export class Shutdown {
  /** The locks the run holds now; the verbs record theirs here. */
  readonly held = new HeldLocks();
  private readonly controller = new AbortController();
  private first: StopSignal | undefined;
  private leaving = false;
  private readonly opts: ShutdownOptions;

  constructor(opts: ShutdownOptions) {
    this.opts = opts;
  }

  /** Aborted on the first signal: every wait, request and child process of the run takes it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The first signal heard, if any. */
  get received(): StopSignal | undefined {
    return this.first;
  }

  /** Listens for SIGINT, SIGTERM and SIGHUP (Node's default for SIGHUP would die at once, leaving the lock). */
  install(proc: NodeJS.Process = process): void {
    for (const sig of STOP_SIGNALS) proc.on(sig, () => this.hear(sig));
  }

  /** One signal: the first stops the run cleanly, the second leaves at once. */
  hear(sig: StopSignal): void {
    if (!this.first) {
      this.first = sig;
      const again = sig === 'SIGINT' ? 'press Ctrl-C again' : `send ${sig} again`;
      this.opts.write(
        `\ndeploy: ${sig} received: stopping cleanly (nothing new starts; work in flight finishes, state is saved, locks are released, each within its own deadline). To leave at once, ${again} (a lock may then stay held).\n`,
      );
      this.controller.abort(new Error(sig));
      return;
    }
    if (this.leaving) return;
    this.leaving = true;
    void this.leave(sig);
  }

  /**
   * The exit code of a run that ended after a signal: an interrupted verb (130 or its
   * InterruptedError) exits for the signal heard (143 for SIGTERM); a verb that finished its
   * work all the same keeps its own code (0, or a rollout's 4-6, status's 7).
   */
  exitCode(code: number, interrupted: boolean): number {
    if (!this.first) return code;
    return interrupted ? exitCodeOf(this.first) : code;
  }

  /**
   * What to report for an error that ended a run: after a signal, an error that is not one of
   * ours (the signal's own reason from a wait it ended, a request it cut) is the interrupt's
   * doing, and is said as such, not as an "unexpected error" with a stack. Any other error,
   * and every error of a run that heard no signal, is returned as it is.
   */
  explain(err: unknown): unknown {
    if (!this.first || err instanceof DeployError) return err;
    const words = err instanceof Error ? err.message : String(err);
    const detail = words === this.first ? '' : ` (${words})`;
    return new InterruptedError(`interrupted by ${this.first}${detail}: the run stopped there, and started nothing after the signal`, {
      hint: 'run the command again: it starts from the state that was saved',
      cause: err,
    });
  }

  private async leave(sig: StopSignal): Promise<void> {
    const lines = [`deploy: ${sig} again: leaving now, without waiting for the cleanup.`];
    const held = this.held.list();
    for (const l of held) lines.push(`  the lock ${l.id} on "${l.key}" (${l.where}) may stay held; free it: ${l.free}`);
    if (held.length === 0) {
      if (this.held.exact) lines.push('  this run held no state lock.');
      else {
        const who = await this.opts.who?.().catch(() => undefined);
        lines.push(
          who
            ? `  if \`deploy state list\` shows a lock held by ${who}, free it once the processes this run started have ended: deploy state unlock --held-by ${shq(who)}`
            : '  `deploy state list` shows any lock this run may have left, with its ID: deploy state unlock <ID>',
        );
      }
    }
    this.opts.write(`${lines.join('\n')}\n`);
    this.opts.exit(exitCodeOf(sig));
  }
}

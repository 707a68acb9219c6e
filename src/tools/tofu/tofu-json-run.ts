/**
 * Runs one `-json` tofu command (init, plan, apply) and reads its stream as it arrives: each
 * line becomes a typed event for the caller (tofu-events.ts), and the run's outcome is either
 * what the stream summarised (change summary, output names, warnings) or an error: a
 * TofuError naming the failed resources, an InterruptedError saying what tofu left
 * (tofu-failure.ts), with the state tofu could not save kept private (tofu-errored-state.ts).
 */
import { InterruptedError } from '../../errors.js';
import type { RunResult } from '../run.js';
import { salvageState } from './tofu-errored-state.js';
import { tofuFailure, tofuInterrupted, type FailureFacts } from './tofu-failure.js';
import { parseTofuLine, type ChangeSummary, type TofuDiagnostic } from './tofu-events.js';
import { FIVE_MINUTES, ONE_HOUR, runTofu, type TofuOptions } from './tofu-process.js';

export interface JsonRun {
  readonly result: RunResult;
  readonly summary: ChangeSummary | undefined;
  readonly outputNames: readonly string[];
  readonly warnings: readonly TofuDiagnostic[];
}

/** Runs a `-json` tofu command, parses its stream, and turns failure into a TofuError. */
export async function runTofuJson(
  opts: TofuOptions,
  verb: string,
  args: readonly string[],
  extra: {
    readonly okExitCodes?: readonly number[];
    readonly timeoutMs?: number;
    /** The command writes state (apply): keep what tofu could not save private. */
    readonly statefulRun?: boolean;
  },
): Promise<JsonRun> {
  const diagnostics: TofuDiagnostic[] = [];
  const failed: string[] = [];
  const interrupts: string[] = [];
  let summary: ChangeSummary | undefined;
  let outputNames: readonly string[] = [];
  let stateDump: unknown;

  const onLine = (line: string) => {
    if (line.trim() === '') return;
    const parsed = parseTofuLine(line);
    const e = parsed.event;
    if (parsed.stateDump !== undefined) stateDump = parsed.stateDump;
    if (e.kind === 'diagnostic') diagnostics.push(e.diagnostic);
    else if (e.kind === 'apply-errored') failed.push(e.address);
    else if (e.kind === 'change-summary') summary = e.summary;
    else if (e.kind === 'outputs') outputNames = e.names;
    else if (e.kind === 'log' && /interrupt/i.test(e.message)) interrupts.push(e.message.trim());
    opts.onEvent?.(e);
  };

  const started = Date.now();
  const okExitCodes = extra.okExitCodes ?? [0];
  let result: RunResult | undefined;
  let runError: unknown;
  try {
    result = await runTofu(opts, args, {
      okExitCodes,
      timeoutMs: extra.timeoutMs ?? opts.timeoutMs ?? ONE_HOUR,
      onStdoutLine: onLine,
      keepStdout: false,
      reject: false,
    });
  } catch (err) {
    runError = err;
  }

  // Whatever happened, never leave state lying around readable, and say where it is.
  const stateNotes = extra.statefulRun ? salvageState(opts.dir, started, stateDump) : [];
  const facts: FailureFacts = { verb, dir: opts.dir, diagnostics, failed, interrupts, stateNotes };

  if (runError instanceof InterruptedError) {
    const killed = (runError.cause as { signal?: string } | undefined)?.signal === 'SIGKILL';
    throw tofuInterrupted(facts, runError, killed ? (opts.interruptGraceMs ?? FIVE_MINUTES) : undefined);
  }
  if (runError !== undefined) {
    if (stateNotes.length && runError instanceof Error) runError.message += `\n${stateNotes.join('\n')}`;
    throw runError;
  }
  const r = result!;
  const ok = okExitCodes.includes(r.exitCode) && r.signal === undefined;
  if (!ok || stateNotes.length > 0) throw tofuFailure(facts, r);
  return { result: r, summary, outputNames, warnings: diagnostics.filter((d) => d.severity === 'warning') };
}

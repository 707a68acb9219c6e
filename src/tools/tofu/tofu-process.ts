/**
 * How tofu is started: which program, in which environment, with which deadline and interrupt
 * mode. Every tofu command goes through `runTofu` (and so through the one process wrapper,
 * run.ts); `TofuOptions` is what every command of tofu.ts takes.
 *
 * The environment is the caller's, whole (the CLI passes its own, so tofu sees what the
 * operator exported, plus the run's TF_HTTP_*, KUBE_CONFIG_PATH, ...): nothing here reads
 * the process environment.
 */
import type { z } from 'zod';
import { TOFU_GOGC, TOFU_GOGC_SET_ENV } from '../../contract/graph/tofu-gogc.js';
import { InterruptedError, ToolError } from '../../errors.js';
import { INSTALL_HINTS, requireTool } from '../discover.js';
import { findProviderConfig } from '../providers.js';
import { runTool, type RunResult } from '../run.js';
import type { TofuEvent } from './tofu-events.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface TofuOptions {
  /** The graph directory: where cdk.tf.json is, and where the lock file is kept. */
  readonly dir: string;
  /**
   * The whole environment tofu runs in: the caller's (e.g. CliContext.env) with the run's
   * TF_HTTP_* (backend), KUBE_CONFIG_PATH, DEPLOY_BIN, DEPLOY_RUN_DIR over it.
   * TF_CLI_CONFIG_FILE in it wins over the cache's mirror (providers.ts).
   */
  readonly env: Env;
  /** Aborting it interrupts tofu once (it stops cleanly and saves state). */
  readonly signal?: AbortSignal;
  /** Each parsed event of the -json stream, as it arrives. */
  readonly onEvent?: (event: TofuEvent) => void;
  /** Deadline of one tofu command. @default 60 minutes (init: 10 minutes) */
  readonly timeoutMs?: number;
  /** How long tofu may take to stop after the interrupt before it is killed. @default 5 minutes */
  readonly interruptGraceMs?: number;
  /**
   * Who gets the one SIGINT on abort. 'group' (default): tofu and the commands its local-exec
   * steps run (e.g. `deploy rollout`), each exactly once, so they can wind down too; tofu's
   * own local-exec Stop only SIGKILLs the step's shell at once
   * (internal/builtin/provisioners/local-exec: exec.CommandContext), which orphans what the
   * shell started. The provider plugins ignore SIGINT (go-plugin). 'process': tofu only.
   */
  readonly interruptTarget?: 'process' | 'group';
  /** `-lock-timeout` for commands that take the state lock. @default '60s' */
  readonly lockTimeout?: string;
  /**
   * The caller holds the state lock for the whole run (src/state/run-lock.ts) and put its ID
   * in TF_HTTP_ADDRESS: plan and apply run with `-lock=false`.
   */
  readonly lockHeld?: boolean;
  /** The tofu program; default: discovered (DEPLOY_TOFU, the cache, PATH) in `env`. */
  readonly tofuPath?: string;
}

export const TEN_MINUTES = 10 * 60_000;
export const ONE_HOUR = 60 * 60_000;
export const FIVE_MINUTES = 5 * 60_000;

/**
 * Always set for tofu, over the caller's environment: plain, non-interactive output, no
 * version checks against the network. (A deploy run is never interactive, whatever the
 * operator's shell exports.)
 */
const NON_INTERACTIVE = { TF_IN_AUTOMATION: '1', TF_INPUT: '0', CHECKPOINT_DISABLE: '1' } as const;

/**
 * Go's garbage collector target for tofu (and the providers and skopeo it starts, which inherit
 * its environment) when the caller sets none: the heap may grow to 5 times what is live before
 * a collection, against 2 times at Go's default of 100. A tofu process is short and reads the
 * whole graph and state; its collector took about 15% of its CPU. Measured (bench/README.md,
 * 2026-12-07): tofu's and the providers' CPU in a 1-node apply at 50 nodes 4.11 s against 4.99,
 * the apply 9.21 s against 10.1; a scoped `tofu plan` at 200 nodes 9.7 user-s against 11.5 (its
 * peak 1.06 GB against 0.50). An operator's GOGC wins; with none, DEPLOY_TOFU_GOGC says deploy
 * set it, and the graph's image build (the operator's command) runs without it.
 */
function gogcOf(env: Env): Record<string, string> {
  return env.GOGC === undefined ? { GOGC: TOFU_GOGC, [TOFU_GOGC_SET_ENV]: TOFU_GOGC } : {};
}

/**
 * The whole environment tofu runs in, which its local-exec steps inherit: the caller's, with
 * deploy's GOGC (unless the caller set one) and the settings above over it. deploy's own run of
 * the push steps before tofu's apply gives them the same (src/workflow/target/push-first.ts).
 */
export function tofuEnvironment(callerEnv: Env): Record<string, string | undefined> {
  const providers = findProviderConfig(callerEnv);
  return {
    ...callerEnv,
    ...gogcOf(callerEnv),
    ...NON_INTERACTIVE,
    // Last: a TF_CLI_CONFIG_FILE naming a missing file (some machines export one) would make
    // tofu print a warning on stdout, before its JSON; discovery already ignored it.
    TF_CLI_CONFIG_FILE: providers.kind === 'online' ? undefined : providers.cliConfigFile,
  };
}

/** Runs tofu through the one process wrapper with its environment and interrupt mode. */
export async function runTofu(
  opts: TofuOptions,
  args: readonly string[],
  run: {
    readonly okExitCodes?: readonly number[];
    readonly timeoutMs: number;
    readonly onStdoutLine?: (line: string) => void;
    readonly keepStdout: boolean;
    readonly reject?: boolean;
  },
): Promise<RunResult> {
  const tofu = opts.tofuPath ?? requireTool('tofu', opts.env).path;
  return runTool(tofu, args, {
    cwd: opts.dir,
    env: tofuEnvironment(opts.env),
    extendEnv: false,
    signal: opts.signal,
    timeoutMs: run.timeoutMs,
    interrupt: 'sigint-once',
    interruptTarget: opts.interruptTarget ?? 'group',
    interruptGraceMs: opts.interruptGraceMs ?? FIVE_MINUTES,
    okExitCodes: run.okExitCodes ?? [0],
    reject: run.reject ?? true,
    keepStdout: run.keepStdout,
    onStdoutLine: run.onStdoutLine,
    // stdout is JSON (it may hold values): error messages quote stderr only
    relevantLine: (line, stream) => stream === 'stderr' && line.trim() !== '',
    installHint: INSTALL_HINTS.tofu,
  });
}

/**
 * Runs a tofu command that prints one JSON document (`show -json`, `output -json`, ...) and
 * returns it checked by `parse`; output it does not understand is a ToolError (exit 3).
 */
export async function readTofuJson<S extends z.ZodType>(
  opts: TofuOptions,
  args: readonly string[],
  schema: S,
  run: { readonly okExitCodes?: readonly number[]; readonly timeoutMs?: number } = {},
): Promise<z.output<S>> {
  const r = await runTofu(opts, args, { okExitCodes: run.okExitCodes, keepStdout: true, timeoutMs: run.timeoutMs ?? opts.timeoutMs ?? TEN_MINUTES }).catch((err: unknown) => {
    // said as what it is (the bare "<path> output -json was interrupted (killed by SIGINT)"
    // left the operator to guess whether anything was left half done)
    if (err instanceof InterruptedError) {
      throw new InterruptedError(`tofu ${args[0]} was interrupted in ${opts.dir}: it only reads, so it changed nothing`, { hint: 'run the command again', cause: err });
    }
    throw err;
  });
  const parsed = schema.safeParse(jsonDocument(r.stdout));
  if (!parsed.success) {
    throw new ToolError(`tofu ${args[0]} -json printed output this program does not understand (exit code ${r.exitCode})`, {
      hint: `check that the tofu in use is OpenTofu (\`deploy doctor\`); ${INSTALL_HINTS.tofu}`,
    });
  }
  return parsed.data;
}

/** The JSON document tofu printed; human warnings printed before it (on stdout) are skipped. */
function jsonDocument(text: string): unknown {
  const starts = [0, ...[...text.matchAll(/^[{[]/gm)].map((m) => m.index)];
  for (const start of starts) {
    try {
      return JSON.parse(text.slice(start));
    } catch {
      // try the next line that opens a document
    }
  }
  return undefined;
}

/**
 * Progress of one node's rollout on stderr: on a TTY one line that updates in place (phase,
 * systemd state, elapsed/deadline); otherwise a plain line whenever the phase or the systemd
 * state changes, and a "still ..." line every 30 s, so CI logs stay short. Under `deploy apply`
 * the step writes machine lines instead (createStepProgress), which the apply's view shows.
 */
import type { Writable } from 'node:stream';
import { z } from 'zod';
import { parseJsonLine } from '../contract/parse-json.js';
import type { Verdict } from './classify/verdict.js';
import { OUTCOMES, type RolloutReport } from './report.js';

/** `soak`: the pod is Ready and watched for the soak (soak.ts); its clock counts the soak. */
export type RolloutStage = 'rollout' | 'soak' | 'rollback';

export interface Progress {
  show(stage: RolloutStage, v: Verdict, elapsedMs: number, limitMs: number): void;
  /** Ends the updating line (TTY) before other output. */
  end(): void;
}

const HEARTBEAT_MS = 30_000;

export function describeVerdict(v: Verdict): string {
  switch (v.kind) {
    case 'ready':
      return `ready (${v.pod})`;
    case 'waiting':
      return `${v.phase}${v.systemdState && !v.detail.includes(`systemd: ${v.systemdState}`) ? ` [systemd: ${v.systemdState}]` : ''}: ${v.detail}`;
    case 'failed':
      return `failed (${v.reason}): ${v.message}`;
  }
}

export function createProgress(stream: Writable & { isTTY?: boolean; columns?: number }, node: string, opts: { tty?: boolean } = {}): Progress {
  const tty = opts.tty ?? Boolean(stream.isTTY);
  let open = false;
  let lastKey = '';
  let lastPrinted = 0;
  return {
    show(stage, v, elapsedMs, limitMs) {
      const prefix = stage === 'rollback' ? `${node}: rolling back: ` : stage === 'soak' ? `${node}: soaking: ` : `${node}: `;
      const clock = `${Math.floor(elapsedMs / 1000)}s/${Math.round(limitMs / 1000)}s`;
      const text = `${prefix}${describeVerdict(v).split('\n')[0]} ${clock}`;
      if (tty) {
        const width = Math.max(20, (stream.columns ?? 120) - 1);
        stream.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
        open = true;
        return;
      }
      const key = `${stage}|${v.kind}|${v.kind === 'waiting' ? `${v.phase}|${v.systemdState ?? ''}` : ''}`;
      if (key !== lastKey || elapsedMs - lastPrinted >= HEARTBEAT_MS) {
        stream.write(`${key === lastKey ? `${prefix}still ` : prefix}${describeVerdict(v).split('\n')[0]} ${clock}\n`);
        lastKey = key;
        lastPrinted = elapsedMs;
      }
    },
    end() {
      if (open) stream.write('\n');
      open = false;
    },
  };
}

/**
 * The rollout step under `deploy apply`: the apply's environment sets DEPLOY_PROGRESS=json,
 * and the step then writes its progress as JSON lines (one per change of phase or systemd
 * state, one per heartbeat, and its outcome) instead of lines for people. tofu hands them over
 * as the step's output (local-exec), and the apply's view reads them with
 * parseStepProgressLine: a machine line, parsed at the boundary, not a human line read back.
 */
export const PROGRESS_ENV = 'DEPLOY_PROGRESS';
export const PROGRESS_JSON = 'json';

/** The key every machine line has: a line without it is the step's own output for people. */
const TAG = 'deployRolloutStep';

const progressLineSchema = z.discriminatedUnion('event', [
  z.object({
    [TAG]: z.literal(1),
    event: z.literal('progress'),
    node: z.string(),
    stage: z.enum(['rollout', 'soak', 'rollback']),
    verdict: z.enum(['waiting', 'ready', 'failed']),
    /** waiting: the phase (pulling, booting, ...); failed: the reason. */
    phase: z.string(),
    systemd: z.string().optional(),
    /** The verdict's first line (its detail or message). */
    detail: z.string(),
    elapsedMs: z.number(),
    limitMs: z.number(),
    /** The soak only: how long the pod must still stay running (limitMs - elapsedMs), for a countdown. */
    remainingMs: z.number().optional(),
  }),
  z.object({
    [TAG]: z.literal(1),
    event: z.literal('outcome'),
    node: z.string(),
    outcome: z.enum(OUTCOMES),
    reason: z.string(),
    failedUnits: z.array(z.string()),
    /** The report's message, first line. */
    message: z.string(),
    totalMs: z.number(),
  }),
]);

export type StepProgress = z.infer<typeof progressLineSchema>;

/** One line of the step's output -> its progress, or undefined for a line for people. */
export function parseStepProgressLine(line: string): StepProgress | undefined {
  if (!line.includes(TAG)) return undefined;
  return parseJsonLine(progressLineSchema, line);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

/** The step's outcome as a machine line (after its report is written). */
export function stepOutcomeLine(r: Pick<RolloutReport, 'node' | 'outcome' | 'reason' | 'failedUnits' | 'message' | 'durations'>): string {
  const e: StepProgress = { [TAG]: 1, event: 'outcome', node: r.node, outcome: r.outcome, reason: r.reason, failedUnits: [...r.failedUnits], message: firstLine(r.message), totalMs: r.durations.totalMs };
  return `${JSON.stringify(e)}\n`;
}

/** Progress as machine lines: on each change of stage, verdict, phase or systemd state, and every 10 s. */
export function createStepProgress(stream: Writable, node: string): Progress {
  let lastKey = '';
  let lastPrinted = 0;
  return {
    show(stage, v, elapsedMs, limitMs) {
      const phase = v.kind === 'waiting' ? v.phase : v.kind === 'failed' ? v.reason : 'ready';
      const systemd = v.kind === 'ready' ? undefined : v.systemdState;
      const key = `${stage}|${v.kind}|${phase}|${systemd ?? ''}`;
      if (key === lastKey && elapsedMs - lastPrinted < (stage === 'soak' ? SOAK_HEARTBEAT_MS : STEP_HEARTBEAT_MS)) return;
      lastKey = key;
      lastPrinted = elapsedMs;
      const soak = stage === 'soak' ? { remainingMs: Math.max(0, limitMs - elapsedMs) } : undefined;
      const ready = soak ? `pod ${v.kind === 'ready' ? v.pod : ''} is ready; soaking: ${Math.ceil(soak.remainingMs / 1000)}s left of ${Math.round(limitMs / 1000)}s` : `pod ${v.kind === 'ready' ? v.pod : ''} is ready`;
      const detail = v.kind === 'waiting' ? v.detail : v.kind === 'failed' ? v.message : ready;
      const e: StepProgress = { [TAG]: 1, event: 'progress', node, stage, verdict: v.kind, phase, ...(systemd ? { systemd } : {}), detail: firstLine(detail), elapsedMs, limitMs, ...soak };
      stream.write(`${JSON.stringify(e)}\n`);
    },
    end() {},
  };
}

const STEP_HEARTBEAT_MS = 10_000;
/** A soak's line comes more often: its remaining time is what a view counts down. */
const SOAK_HEARTBEAT_MS = 5_000;

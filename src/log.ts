import { createRequire } from 'node:module';
import { z } from 'zod';
import { parseJsonLine } from './contract/parse-json.js';

/**
 * Every structured event deploy logs, as one union tagged by `kind`. The logger takes only
 * these, so an event without a known `kind`, or with a field its kind does not have, does not
 * compile; a reader of the JSON lines finds each kind here. A Kubernetes kind is never `kind`
 * (it is `objectKind`).
 */
/** An error as logged: its message only (stacks go to DEPLOY_DEBUG output). */
type Err = string;

/** The embedded and served state backend, its store and the run's state lock. */
export type StateLogEvent =
  | { kind: 'state-backend-started'; address: string; dataDir: string }
  | { kind: 'state-backend-stopped'; address: string }
  | { kind: 'state-serving'; url: string; store: string; data: string; auth: boolean }
  | { kind: 'state-stopped' }
  | { kind: 'state-request'; method: string | undefined; key: string | undefined; status: number; ms: number }
  | { kind: 'state-storage-failed'; key: string | undefined; method: string | undefined; err: Err }
  | { kind: 'state-update-refused'; key: string; serial: number; reason: string }
  | { kind: 'state-deleted'; key: string; serial: number }
  | { kind: 'state-database-connection-lost'; where: string; err: Err }
  | { kind: 'state-locked'; key: string; id: string; who: string | undefined }
  /** Released by the run that took it, or by an operator (`deploy state unlock`: `who` held it). */
  | { kind: 'state-unlocked'; key: string; id: string; who?: string | undefined; stale?: boolean }
  | { kind: 'state-unlock-refused'; key: string; id: string; holder: string | undefined }
  | { kind: 'state-unlock-failed'; key: string; id: string; who: string | undefined; err: Err }
  | { kind: 'state-redacted'; hidden: number }
  | ({ kind: 'state-migrated'; key: string } & (
      | { result: 'copied'; serial: number; lineage: string; replaced?: { serial: number } }
      | { result: 'already-there'; serial: number; lineage: string }
      | { result: 'refused'; reason: string }
    ));

/** `deploy rollout` (the graph's rollout step) watching one node. */
export type RolloutLogEvent =
  | { kind: 'rollout-object-skipped'; objectKind: string; err: Err }
  | { kind: 'rollout-watch-reconnecting'; watch: string; err: Err; retryInMs: number }
  | { kind: 'rollout-jobs-unread'; pod: string; err: Err }
  | { kind: 'rollout-log-tail-unread'; pod: string; err: Err }
  | { kind: 'rollout-journal-unread'; pod: string; err: Err }
  | { kind: 'rollout-failed'; node: string; namespace: string; reason: string; message: string }
  | { kind: 'rollout-rolled-back'; node: string; to: string | null | undefined; revision: number; generation: number }
  | { kind: 'rollout-report-unrecorded'; node: string; namespace: string; err: Err };

/** plan/apply/destroy of one target. */
export type TargetLogEvent =
  | { kind: 'rollout-steps-unreported'; steps: readonly string[] }
  | { kind: 'target-applied'; target: string; rollouts: number }
  | { kind: 'noop-record'; err: string }
  /** A plan without changes that keeps no no-op record, and why (target-planner.ts decideAfterTofu). */
  | { kind: 'noop-not-recorded'; target: string; reason: string };

/** The tools deploy drives (src/tools/). */
export type ToolLogEvent =
  /** A saved plan read by `tofu show -json` because the in-process reader was unsure of it (src/tools/tofu/tofu.ts planGraph). */
  { kind: 'plan-read-fallback'; planFile: string; reason: string };

export type LogEvent = StateLogEvent | RolloutLogEvent | TargetLogEvent | ToolLogEvent;

/** The kinds, for a reader who filters the JSON lines. */
export type LogEventKind = LogEvent['kind'];

/** One method per level; each takes one event and a sentence for people. */
export interface Logger {
  trace(event: LogEvent, message: string): void;
  debug(event: LogEvent, message: string): void;
  info(event: LogEvent, message: string): void;
  warn(event: LogEvent, message: string): void;
  error(event: LogEvent, message: string): void;
}

/**
 * Structured events go to stderr (stdout carries only results). Pretty on a TTY, JSON
 * lines otherwise; DEPLOY_LOG_LEVEL of the run's environment (`env`, never process.env) sets
 * the level (default info). pino is loaded on first use: it costs more start-up time than
 * `deploy --help` may take.
 */
export function createLogger(opts: { env: NodeJS.ProcessEnv; level?: string; pretty?: boolean }): Logger {
  const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
  const level = opts.level ?? opts.env.DEPLOY_LOG_LEVEL ?? 'info';
  const pretty = opts.pretty ?? Boolean(process.stderr.isTTY);
  if (pretty) {
    return pino({
      level,
      transport: {
        target: 'pino-pretty',
        options: { destination: 2, colorize: true, ignore: 'pid,hostname', translateTime: 'HH:MM:ss' },
      },
    });
  }
  return pino({ level, base: undefined }, pino.destination({ dest: 2, sync: true }));
}


const logLineSchema = z.object({ level: z.number(), msg: z.string(), kind: z.string().optional() }).loose();

/**
 * One JSON line of a deploy logger (a child's: the rollout step, whose stderr tofu hands over
 * as the step's output), as the level's name and the sentence; undefined for any other line.
 */
export function parseLogLine(line: string): { level: string; msg: string } | undefined {
  if (!line.startsWith('{')) return undefined;
  const parsed = parseJsonLine(logLineSchema, line);
  if (parsed === undefined) return undefined;
  // pino's numbers (https://getpino.io/#/docs/api?id=loggerlevels)
  const level = parsed.level >= 50 ? 'error' : parsed.level >= 40 ? 'warning' : parsed.level >= 30 ? 'info' : 'debug';
  return { level, msg: parsed.msg };
}

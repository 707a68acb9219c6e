/**
 * The rollout report: what `deploy rollout` found and did for one node, as data. The step
 * writes it to `<run dir>/rollout-<ns>-<node>.json`; `deploy apply` reads all of them after
 * tofu exits, prints one summary and exits with the matching code.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ExitCode, ToolError } from '../errors.js';
import { processRuns } from '../process-alive.js';

export const OUTCOMES = ['ready', 'rolled-back', 'failed-no-previous', 'rollback-failed', 'interrupted'] as const;
export type RolloutOutcome = (typeof OUTCOMES)[number];

const ReportedEventSchema = z.object({
  time: z.string().nullable(),
  type: z.string(),
  reason: z.string(),
  object: z.string(),
  count: z.number(),
  message: z.string(),
});
export type ReportedEvent = z.infer<typeof ReportedEventSchema>;

const TerminatedSchema = z.object({
  exitCode: z.number(),
  reason: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

const LastStateSchema = z.object({
  pod: z.string(),
  phase: z.string().nullable(),
  ready: z.boolean(),
  /** `waiting: <reason>`, `running`, `terminated: <reason>` of the `node` container. */
  container: z.string().nullable(),
  restartCount: z.number(),
  lastTerminated: TerminatedSchema.nullable(),
  systemdState: z.string().nullable(),
});
export type LastState = z.infer<typeof LastStateSchema>;

const DurationsSchema = z.object({
  /** From the start of the watch to the verdict (ready, or the terminal failure). */
  waitMs: z.number(),
  /** Reading the evidence (log tail, journal of the failed units) before the rollback. */
  evidenceReadMs: z.number().nullable(),
  /** From the rollback patch to the previous revision's pod being ready (or giving up). */
  rollbackMs: z.number().nullable(),
  /**
   * From the API's first sign of the failure (e.g. the kubelet's `degraded` probe event) to
   * the verdict, and to rollback done. Event times have whole seconds: up to 1 s too long.
   */
  evidenceToVerdictMs: z.number().nullable(),
  evidenceToRollbackDoneMs: z.number().nullable(),
  totalMs: z.number(),
});

export const RolloutReportSchema = z.object({
  version: z.literal(1),
  node: z.string(),
  namespace: z.string(),
  outcome: z.enum(OUTCOMES),
  /** `ready`, `interrupted`, or the failure reason of src/rollout/classify/classify.ts. */
  reason: z.string(),
  /** One or two sentences for people: what happened and what the node runs now. */
  message: z.string(),
  failedUnits: z.array(z.string()),
  events: z.array(ReportedEventSchema),
  lastState: LastStateSchema.nullable(),
  logTail: z.array(z.string()),
  /** systemd's job queue when a boot did not finish in time (src/rollout/classify/systemd-jobs.ts), running jobs first. */
  systemdJobs: z.array(z.object({ unit: z.string(), type: z.string(), state: z.string() })).default([]),
  /** The image the rollout tried (the Deployment's template at the start). */
  image: z.string().nullable(),
  /** The image of the previous revision: what a rollback set back (null on a first deploy). */
  previousImage: z.string().nullable(),
  timeoutSeconds: z.number(),
  /** The soak the pod had to hold once Ready (soak.ts), when there was one. */
  soakSeconds: z.number().optional(),
  startedAt: z.string(),
  durations: DurationsSchema,
});
export type RolloutReport = z.infer<typeof RolloutReportSchema>;

const EXIT_CODES: Record<RolloutOutcome, ExitCode> = {
  ready: ExitCode.ok,
  'rolled-back': ExitCode.rolledBack,
  'failed-no-previous': ExitCode.failedNoPrevious,
  'rollback-failed': ExitCode.rollbackFailed,
  interrupted: ExitCode.interrupted,
};

export function outcomeExitCode(outcome: RolloutOutcome): ExitCode {
  return EXIT_CODES[outcome];
}

/** Worst first: a node left down outweighs one rolled back, which outweighs an interrupt. */
const SEVERITY: readonly RolloutOutcome[] = ['rollback-failed', 'failed-no-previous', 'rolled-back', 'interrupted', 'ready'];

/** The exit code of a run over several nodes: that of the worst outcome (0 when none). */
export function rolloutsExitCode(reports: readonly Pick<RolloutReport, 'outcome'>[]): ExitCode {
  for (const o of SEVERITY) if (reports.some((r) => r.outcome === o)) return outcomeExitCode(o);
  return ExitCode.ok;
}

/** `rollout-<ns>-<node>`: the step's files in the run directory (its report, its running mark). */
function stepFileBase(namespace: string, node: string): string {
  return `rollout-${namespace}-${node}`;
}

export function reportFileName(namespace: string, node: string): string {
  return `${stepFileBase(namespace, node)}.json`;
}

/** Writes the report atomically (temp file + rename), so a reader never sees half of it. */
export async function writeRolloutReport(dir: string, report: RolloutReport): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, reportFileName(report.namespace, report.node));
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(report, null, 2)}\n`);
  await rename(tmp, file);
  return file;
}

/**
 * The step in flight. On an interrupt, tofu's local-exec Stop SIGKILLs the step's shell at once
 * and stops reading its output, while the step itself (which got its own SIGINT) is still
 * winding down and writing its report. So the step marks itself running (`rollout-<ns>-<node>.running`,
 * holding its PID) until its report is written, and `deploy apply` waits for the marks of live
 * steps (waitForRunningSteps) before it reads the reports: what the step said is never lost to
 * that race.
 */
export async function markStepRunning(dir: string, namespace: string, node: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${stepFileBase(namespace, node)}.running`);
  await writeFile(file, `${process.pid}\n`);
  return () => rm(file, { force: true });
}

/**
 * Waits until no step of the run directory is still running (its mark gone, or its process
 * dead), at most `graceMs`. Returns the nodes' marks still there at the end (empty: all done).
 */
export async function waitForRunningSteps(dir: string, graceMs: number, pollMs = 100): Promise<string[]> {
  const until = Date.now() + graceMs;
  for (;;) {
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith('.running'));
    } catch {
      return [];
    }
    const live: string[] = [];
    for (const name of names) {
      const pid = Number.parseInt(await readFile(join(dir, name), 'utf8').catch(() => ''), 10);
      if (Number.isInteger(pid) && pid > 0 && processRuns(pid)) live.push(name.replace(/^rollout-|\.running$/g, ''));
    }
    if (live.length === 0 || Date.now() >= until) return live;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * Reads every `rollout-*.json` of a run directory, sorted by namespace and node. A missing
 * directory is no reports; a file that does not parse is an error naming it.
 */
export async function readRolloutReports(dir: string): Promise<RolloutReport[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const reports: RolloutReport[] = [];
  for (const name of names.filter((n) => /^rollout-.+\.json$/.test(n)).sort()) {
    const file = join(dir, name);
    reports.push(parseReport(file, await readFile(file, 'utf8')));
  }
  return reports.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.node.localeCompare(b.node));
}

/**
 * One report file's text as a report. A file that is not JSON or not a report (a step killed
 * while writing it, a disk that was full) is a ToolError naming the file: the apply ran, but
 * what the rollout did is unknown.
 */
function parseReport(file: string, text: string): RolloutReport {
  const broken = (why: string) =>
    new ToolError(`${file}: not a rollout report: ${why}`, {
      hint: 'the rollout step wrote no readable report; see the node with `kubectl rollout status deployment/<node> -n <namespace>`, and run `deploy apply` again (a failed step is tried again)',
    });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw broken(`not JSON (${(err as Error).message})`);
  }
  const parsed = RolloutReportSchema.safeParse(json);
  if (!parsed.success) throw broken(parsed.error.message);
  return parsed.data;
}

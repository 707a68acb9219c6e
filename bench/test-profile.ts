// The profile of a test run (issue 49), not a benchmark of deploy:
//   npm run test:profile [-- <report.json>...]  (or: node bench/test-profile.ts [<report.json>...])
// Reads the reports `npm test` writes (test/support/profile-reporter.ts: vitest's JSON report
// with a `profile` of each file; one per lane, test/run.ts), by default the newest run's in
// <state>/test-reports/, and prints
// per project and for the 15 slowest files: the wall time and its phases (the import of the
// file, its tests and hooks), each file's share of all files' time. Files of the unit project
// run side by side, the e2e project's two at a time (its `alone` ones one at a time:
// test/e2e/side-by-side.ts), and the unit + integration lane beside the e2e one, so the files'
// times add up to more than the run's wall time; the integration project runs one file at a time.
// An e2e file's wait for the lock of the e2e files (test/e2e/cluster-share.ts) is in its import.
// A report without `profile` (vitest's own JSON reporter) gives the tests' span per file only:
// no import, no hooks before the first test or after the last.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir } from '../src/paths.ts';

interface FileRun {
  file: string;
  project: string;
  /** Wall time: queued (just before its import) to its end. */
  ms: number;
  importMs: number;
  testsMs: number;
  queuedAt: number;
  endedAt: number;
  failed: boolean;
}

export interface Report {
  startTime: number;
  numTotalTests: number;
  numFailedTests: number;
  testResults: { name: string; startTime: number; endTime: number; status: string }[];
  profile?: {
    startedAt: number;
    endedAt: number;
    modules: {
      file: string;
      project: string;
      queuedAt: number;
      endedAt: number;
      environmentSetupMs: number;
      prepareMs: number;
      collectMs: number;
      setupMs: number;
      testsMs: number;
      state: string;
    }[];
  };
}

const root = join(import.meta.dirname, '..');
const TOP = 15;

/**
 * The newest run's reports in <state>/test-reports/: `npm test` (test/run.ts) writes one per
 * lane, `<run start>.<lane>.json`; a single vitest run writes `<run start>.json`.
 */
function newestRun(): string[] {
  const dir = join(stateDir(), 'test-reports');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch {
    names = [];
  }
  if (names.length === 0) throw new Error(`no report in ${dir}: run \`npm test\` (it writes one there), or name a report`);
  const run = names.at(-1)!.split('.')[0]!;
  return names.filter((n) => n.split('.')[0] === run).map((n) => join(dir, n));
}

/** The lanes of one run as one report: their files together, the run from the first start to the last end. */
export function mergeReports(reports: readonly Report[]): Report {
  if (reports.length === 1) return reports[0]!;
  const profiles = reports.map((r) => r.profile);
  const all = profiles.every((p) => p !== undefined);
  return {
    startTime: Math.min(...reports.map((r) => r.startTime)),
    numTotalTests: sum(reports.map((r) => r.numTotalTests)),
    numFailedTests: sum(reports.map((r) => r.numFailedTests)),
    testResults: reports.flatMap((r) => r.testResults),
    ...(all
      ? {
          profile: {
            startedAt: Math.min(...profiles.map((p) => p!.startedAt)),
            endedAt: Math.max(...profiles.map((p) => p!.endedAt)),
            modules: profiles.flatMap((p) => p!.modules),
          },
        }
      : {}),
  };
}

/** The project of a file by its path, for a report without a profile (vitest.config.ts's includes). */
function projectByPath(file: string): string {
  return /^test\/(integration|e2e)\//.exec(file)?.[1] ?? 'unit';
}

function fileRuns(report: Report): { runs: FileRun[]; startedAt: number; endedAt: number; profiled: boolean } {
  if (report.profile) {
    const runs = report.profile.modules.map((m) => ({
      file: m.file,
      project: m.project,
      ms: m.endedAt - m.queuedAt,
      importMs: m.environmentSetupMs + m.prepareMs + m.collectMs + m.setupMs,
      testsMs: m.testsMs,
      queuedAt: m.queuedAt,
      endedAt: m.endedAt,
      failed: m.state === 'failed',
    }));
    return { runs, startedAt: report.profile.startedAt, endedAt: report.profile.endedAt, profiled: true };
  }
  const runs = report.testResults.map((t) => {
    const file = t.name.startsWith(`${root}/`) ? t.name.slice(root.length + 1) : t.name;
    return { file, project: projectByPath(file), ms: t.endTime - t.startTime, importMs: Number.NaN, testsMs: t.endTime - t.startTime, queuedAt: t.startTime, endedAt: t.endTime, failed: t.status === 'failed' };
  });
  return { runs, startedAt: report.startTime, endedAt: Math.max(report.startTime, ...runs.map((r) => r.endedAt)), profiled: false };
}

const s = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '-');
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

function table(header: string[], rows: string[][], left: number[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function renderProfile(report: Report, source: string): string {
  const { runs, startedAt, endedAt, profiled } = fileRuns(report);
  const total = sum(runs.map((r) => r.ms));
  const out: string[] = [];
  out.push(`${source}`);
  out.push(
    `run of ${new Date(startedAt).toISOString()}: ${runs.length} files, ${report.numTotalTests} tests (${report.numFailedTests} failed), wall ${s(endedAt - startedAt)} s; the files' times add up to ${s(total)} s`,
  );
  if (!profiled) out.push('(no profile in this report: each file\'s time is the span of its tests; imports and the hooks around them are not counted)');
  const first = Math.min(...runs.map((r) => r.queuedAt));
  if (runs.length > 0) out.push(`before the first file was queued (vitest's start, the global setups that ran first): ${s(first - startedAt)} s`);

  const projects = [...new Set(runs.map((r) => r.project))];
  const perProject = projects
    .map((p) => {
      const of = runs.filter((r) => r.project === p);
      const from = Math.min(...of.map((r) => r.queuedAt));
      const to = Math.max(...of.map((r) => r.endedAt));
      return { p, of, from, to, files: sum(of.map((r) => r.ms)) };
    })
    .sort((a, b) => b.files - a.files);
  out.push('', 'per project (from/to: seconds after the run started; wall: its first file queued to its last file ended)');
  out.push(
    table(
      ['project', 'files', 'from', 'to', 'wall s', "files' s", 'share', 'import s', 'tests+hooks s'],
      perProject.map(({ p, of, from, to, files }) => [p, String(of.length), s(from - startedAt), s(to - startedAt), s(to - from), s(files), pct(files, total), s(sum(of.map((r) => r.importMs))), s(sum(of.map((r) => r.testsMs)))]),
      [0],
    ),
  );

  const slowest = [...runs].sort((a, b) => b.ms - a.ms).slice(0, TOP);
  out.push('', `the ${slowest.length} slowest files (share: of all files' time; together ${pct(sum(slowest.map((r) => r.ms)), total)})`);
  out.push(
    table(
      ['s', 'share', 'import s', 'tests+hooks s', 'project', 'file'],
      slowest.map((r) => [s(r.ms), pct(r.ms, total), s(r.importMs), s(r.testsMs), r.project, `${r.file}${r.failed ? ' (failed)' : ''}`]),
      [4, 5],
    ),
  );
  return out.join('\n');
}

if (import.meta.main) {
  const files = process.argv.length > 2 ? process.argv.slice(2) : newestRun();
  const report = mergeReports(files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Report));
  process.stdout.write(`${renderProfile(report, files.join(' + '))}\n`);
}

// `npm test`: the three vitest projects in two lanes side by side (issue 49).
//
//   npm test                       both lanes; exit 0 only when both passed
//   npm test -- <vitest args>      one vitest run with those args, as `vitest run <args>`
//
// Vitest 5 runs projects of different worker counts one after another (the integration project
// one file at a time, the e2e project two: test/e2e/side-by-side.ts), so in one process the
// three projects' times add up.
// Only the e2e project uses the cluster; the unit and integration projects use none of it (their
// servers listen on ports the kernel picks, their tools build under the cache's per-key lock,
// and the run-guardian test keeps its dead runs in PID namespaces of its own). So the e2e lane
// runs in the foreground, its output live, and the unit + integration lane beside it, its
// output kept in a log under <state>/test-reports/ and printed whole when it ends. Each lane
// writes its profile report (test/support/profile-reporter.ts) as <run>.<lane>.json, which
// `npm run test:profile` reads together.
//
// Ctrl-C reaches both vitest processes (one process group) and each tears its setups down (the
// e2e setup takes the cluster down when it brought it up); SIGTERM is passed on to both.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { LANES, type Lane } from './lanes.ts';
import { reportStem } from './support/report-name.ts';

const repo = join(import.meta.dirname, '..');
const vitest = join(repo, 'node_modules', 'vitest', 'vitest.mjs');
const REPORTERS = ['--reporter=default', '--reporter=./test/support/profile-reporter.ts'];

interface LaneEnd {
  readonly lane: Lane;
  readonly code: number;
  readonly seconds: number;
}

function runLane(lane: Lane, stem: string, log: string | undefined, children: ChildProcess[]): Promise<LaneEnd> {
  const started = Date.now();
  const args = [vitest, 'run', ...lane.projects.flatMap((p) => ['--project', p]), ...REPORTERS];
  const env = { ...process.env, DEPLOY_TEST_REPORT_FILE: `${stem}.${lane.name}.json` };
  const child = spawn(process.execPath, args, { cwd: repo, env, stdio: log ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  children.push(child);
  if (log) {
    const out = createWriteStream(log);
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
    child.on('close', () => out.end());
  }
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      resolve({ lane, code: code ?? 128 + (signal ? constants.signals[signal] : 0), seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const children: ChildProcess[] = [];
  process.on('SIGTERM', () => children.forEach((c) => c.kill('SIGTERM')));
  // Ctrl-C: the terminal sends SIGINT to the whole process group, vitest included; stay alive
  // until both have torn down and report what they said.
  process.on('SIGINT', () => undefined);

  if (argv.length > 0) {
    const child = spawn(process.execPath, [vitest, 'run', ...REPORTERS, ...argv], { cwd: repo, stdio: 'inherit' });
    children.push(child);
    return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  }

  const stem = reportStem(new Date());
  mkdirSync(dirname(stem), { recursive: true });
  const logOf = (lane: Lane) => (lane.live ? undefined : `${stem}.${lane.name}.log`);
  const kept = LANES.filter((l) => !l.live);
  process.stdout.write(
    `npm test: ${LANES.map((l) => l.projects.join(' + ')).join(' beside ')}; the output of ${kept.map((l) => `${l.projects.join(' + ')} goes to ${logOf(l)}`).join(', ')}, shown here when it ends\n`,
  );
  const runs = LANES.map((lane) => {
    const log = logOf(lane);
    const end = runLane(lane, stem, log, children);
    if (!log) return end;
    return end.then((e) => {
      const title = lane.projects.join(' + ');
      process.stdout.write(`\n──── ${title} (a lane of its own): ${verdict(e)} ────\n${readFileSync(log, 'utf8')}──── end of ${title} ────\n\n`);
      return e;
    });
  });
  const ends = await Promise.all(runs);
  process.stdout.write(`\nnpm test: ${ends.map((e) => `${e.lane.name} ${verdict(e)}`).join('; ')}\n`);
  return ends.every((e) => e.code === 0) ? 0 : Math.max(...ends.map((e) => e.code));
}

function verdict(end: LaneEnd): string {
  return end.code === 0 ? `passed in ${end.seconds} s` : `FAILED (exit ${end.code}) after ${end.seconds} s`;
}

process.exitCode = await main(process.argv.slice(2));

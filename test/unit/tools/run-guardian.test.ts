/**
 * No process outlives its run (issue 50): the run mark, the guardian and the reaper of
 * src/tools/run.ts, with a deploy in miniature (fixtures/run-tree.mjs: runTool starting a
 * process tree as deploy starts tofu) that is killed with SIGKILL, as an OOM kill or a killed
 * CI runner does. Real processes, no mocks; every wait polls a condition up to a deadline.
 *
 * Run it on a machine where no other deploy starts meanwhile (`npm test` runs the unit project
 * after the e2e project): every deploy that starts a process reaps the stale runs it finds on
 * the machine (stale-runs.ts), and the fixtures here carry stale marks on purpose, so a deploy
 * of an e2e run beside them ends them early, as it should. Seen with `npm run test:fast` during
 * an e2e run: a fixture ended by SIGTERM before its first line, a stubborn process killed before
 * its grace.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { GUARDIAN_GRACE_MS, GUARDIAN_NAME } from '../../../src/tools/run-guardian.js';
import { ownPidNamespace, parseRunMark, RUN_MARK_VAR, startTimeOf } from '../../../src/tools/run-mark.js';
import { findStaleRunMarks, markIn } from '../../../src/tools/stale-runs.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'run-tree.mjs');
const HOOKS = join(here, '..', '..', 'support', 'ts-source-hooks.mjs');

interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly pids: readonly number[];
  readonly mark: string;
  readonly exited: Promise<void>;
}

const started: Started[] = [];

/** Starts the fixture as its own deploy (not through runTool) and waits for its "ready". */
async function startFixture(mode: 'tree' | 'stubborn' | 'once' | 'idle', mark?: string): Promise<Started> {
  const env = { ...process.env };
  delete env[RUN_MARK_VAR];
  if (mark !== undefined) env[RUN_MARK_VAR] = mark;
  const child = spawn(process.execPath, ['--experimental-transform-types', '--disable-warning=ExperimentalWarning', '--import', HOOKS, FIXTURE, mode], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', (code, signal) => ((exit = `exited (${signal ?? code}) before it was ready`), resolve())));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (err += String(d)));
  // (a fixture loads TypeScript through Node's type stripping: on a loaded host, with other test
  // workers and a cluster beside it, that took more than 15 s once, and 50 s twice under a
  // load of 10 on 2 cores; the wait ends at the line, or when the fixture ends without it)
  const t0 = Date.now();
  await waitFor(() => out.includes('ready\n') || exit !== undefined, 80_000, () => `the fixture (${mode}) did not get ready in ${Date.now() - t0} ms: ${out} ${err}`);
  if (!out.includes('ready\n')) throw new Error(`the fixture (${mode}) ${exit}: ${out} ${err}`);
  const lines = out.split('\n');
  const s: Started = {
    child,
    pid: child.pid!,
    pids: lines.filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4))),
    mark: lines.find((l) => l.startsWith('mark '))?.slice(5) ?? '',
    exited,
  };
  started.push(s);
  return s;
}

async function kill9(s: Started): Promise<void> {
  s.child.kill('SIGKILL');
  await s.exited;
}

/** Polls `ok` every 50 ms until it holds; fails with `why` after `ms`. */
async function waitFor(ok: () => boolean, ms: number, why: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(why());
    await new Promise((r) => setTimeout(r, 50));
  }
}

function pidsNow(): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);
}

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function stat(pid: number): { state: string; ppid: number; sid: number } | undefined {
  const text = read(`/proc/${pid}/stat`)?.toString();
  if (text === undefined) return undefined;
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: f[0]!, ppid: Number(f[1]), sid: Number(f[3]) };
}

/** The live processes whose environment carries exactly this mark. */
function marked(mark: string): number[] {
  return pidsNow().filter((pid) => {
    const env = read(`/proc/${pid}/environ`);
    return env !== undefined && env.toString().split('\0').includes(`${RUN_MARK_VAR}=${mark}`) && stat(pid)?.state !== 'Z';
  });
}

/** The live guardians of this mark (by their command line: `sh -c ... deploy-run-guardian <mark>`). */
/**
 * The guardians of `mark`. A guardian's command substitution (`$(grep ...)`) and its `sleep`
 * run in a fork of its `sh`, which shows the same command line until it execs or ends: such a
 * child of a guardian is not a second guardian (the CI run of stop 51 counted one).
 */
function guardians(mark: string): number[] {
  const shells = pidsNow().filter((pid) => {
    const argv = read(`/proc/${pid}/cmdline`)?.toString().split('\0') ?? [];
    return argv.includes(GUARDIAN_NAME) && argv.includes(mark) && stat(pid)?.state !== 'Z';
  });
  return shells.filter((pid) => !shells.includes(stat(pid)?.ppid ?? -1));
}

function alive(pid: number): boolean {
  const s = stat(pid);
  return s !== undefined && s.state !== 'Z';
}

afterEach(async () => {
  // what a failed test left: the fixtures, then only the processes that carry their marks
  for (const s of started.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) await kill9(s);
    for (const pid of s.mark ? marked(s.mark) : []) process.kill(pid, 'SIGKILL');
  }
});

describe('the run mark', () => {
  it('parses only its own form', () => {
    expect(parseRunMark('123.456.4026531836.0123456789ab')).toEqual({ text: '123.456.4026531836.0123456789ab', pid: 123, start: '456', pidns: '4026531836' });
    expect(parseRunMark(undefined)).toBeUndefined();
    expect(parseRunMark('123')).toBeUndefined();
    expect(parseRunMark('123.456.789.0123456789ab; rm -rf /')).toBeUndefined();
    expect(parseRunMark('0.456.789.0123456789ab')).toBeUndefined();
  });

  it('is found in an environ only as a whole variable', () => {
    const env = (vars: string[]) => Buffer.from(`${vars.join('\0')}\0`);
    expect(markIn(env(['A=1', `${RUN_MARK_VAR}=1.2.3.0123456789ab`, 'B=2']))).toBe('1.2.3.0123456789ab');
    expect(markIn(env([`${RUN_MARK_VAR}=first`]))).toBe('first');
    expect(markIn(env([`X_${RUN_MARK_VAR}=no`, 'B=2']))).toBeUndefined();
    expect(markIn(env([`X_${RUN_MARK_VAR}=no`, `${RUN_MARK_VAR}=yes`]))).toBe('yes');
    expect(markIn(Buffer.alloc(0))).toBeUndefined();
  });

  it('GIVEN a process carrying the mark of a run whose deploy is gone THEN it is a stale run, but never to the deploy that inherited that mark (its own environ carries it: it would end itself)', async () => {
    const stale = `${process.pid}.1.${ownPidNamespace()}.${randomBytes(6).toString('hex')}`;
    const own = { text: `${process.pid}.${startTimeOf(process.pid)}.${ownPidNamespace()}.0123456789ab`, pidns: ownPidNamespace()! };
    const child = spawn('sleep', ['60'], { env: { ...process.env, [RUN_MARK_VAR]: stale }, stdio: 'ignore' });
    try {
      await waitFor(() => marked(stale).length === 1, 5000, () => 'the marked sleep did not start');
      expect((await findStaleRunMarks(own)).map((m) => m.text)).toContain(stale);
      expect((await findStaleRunMarks(own, stale)).map((m) => m.text)).not.toContain(stale);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('the run guardian', { timeout: 120_000 }, () => {
  it('GIVEN a deploy whose child started a tree WHEN the deploy is killed with SIGKILL THEN within 5 s no process with its mark is left, and the guardian is gone too', async () => {
    const run = await startFixture('tree');
    // GIVEN: the whole tree carries the run's mark, and one guardian watches it from a session of its own
    expect(parseRunMark(run.mark)?.pid).toBe(run.pid);
    expect(run.pids).toHaveLength(3);
    expect(marked(run.mark).sort()).toEqual([...run.pids].sort());
    const [guardian, ...more] = guardians(run.mark);
    expect(more).toEqual([]);
    expect(stat(guardian!)).toMatchObject({ ppid: run.pid, sid: guardian });
    // WHEN
    await kill9(run);
    // THEN
    await waitFor(() => marked(run.mark).length === 0, 5000, () => `still running: ${marked(run.mark).join(' ')}`);
    await waitFor(() => !alive(guardian!), 5000, () => `the guardian ${guardian} still runs`);
  });

  it(`GIVEN a process of the run that ignores SIGTERM WHEN the deploy is killed THEN the others end at once and that one gets SIGKILL after the grace (${GUARDIAN_GRACE_MS} ms)`, async () => {
    const run = await startFixture('stubborn');
    expect(run.pids).toHaveLength(4);
    const [sleep300, sleep302, stubborn, shell] = run.pids;
    const t0 = Date.now();
    await kill9(run);
    await waitFor(() => ![sleep300!, sleep302!, shell!].some(alive), 5000, () => 'the processes that take SIGTERM still run');
    // the SIGTERM came and went: the stubborn one outlived it, until the grace is over
    expect(alive(stubborn!)).toBe(true);
    await waitFor(() => !alive(stubborn!), GUARDIAN_GRACE_MS + 5000, () => `${stubborn} (ignores SIGTERM) still runs`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(GUARDIAN_GRACE_MS - 500);
    expect(marked(run.mark)).toEqual([]);
  }, GUARDIAN_GRACE_MS + 70_000);

  it('GIVEN a deploy that started a process WHEN it exits normally THEN its guardian leaves too', async () => {
    const run = await startFixture('once');
    await run.exited;
    expect(run.child.exitCode).toBe(0);
    expect(parseRunMark(run.mark)?.pid).toBe(run.pid);
    await waitFor(() => guardians(run.mark).length === 0, 5000, () => `guardian still runs: ${guardians(run.mark).join(' ')}`);
  });

  it('GIVEN a deploy that starts no process THEN it starts no guardian either', async () => {
    const run = await startFixture('idle');
    expect(pidsNow().filter((pid) => stat(pid)?.ppid === run.pid)).toEqual([]);
  });

  it('GIVEN a deploy started by a run (a mark whose deploy runs, as `deploy rollout` under tofu) THEN its tree keeps that mark and it starts no guardian', async () => {
    const outer = `${process.pid}.${startTimeOf(process.pid)}.${ownPidNamespace()}.0123456789ab`;
    const run = await startFixture('tree', outer);
    try {
      expect(run.mark).toBe(outer);
      expect(guardians(outer)).toEqual([]);
      expect(pidsNow().filter((pid) => stat(pid)?.ppid === run.pid)).toEqual([run.pids[2]]);
    } finally {
      // no guardian of its own, and the "outer run" (this test) does not exit: end them here
      await kill9(run);
      for (const pid of run.pids) process.kill(pid, 'SIGKILL');
    }
  });

  it('GIVEN an inherited mark whose deploy is gone (its PID now another process) THEN the deploy takes a mark and a guardian of its own', async () => {
    const gone = `${process.pid}.1.${ownPidNamespace()}.0123456789ab`;
    const run = await startFixture('tree', gone);
    expect(run.mark).not.toBe(gone);
    expect(parseRunMark(run.mark)?.pid).toBe(run.pid);
    expect(guardians(run.mark)).toHaveLength(1);
  });
});

describe('the reaper', { timeout: 180_000 }, () => {
  it('GIVEN a run killed together with its guardian, and a run still going WHEN the next deploy starts a process THEN the dead run\'s processes end and the live run\'s stay', async () => {
    const dead = await startFixture('tree');
    const live = await startFixture('tree');
    // GIVEN: the guardian killed first, then its deploy; the tree stays, nobody watches it
    const [guardian] = guardians(dead.mark);
    process.kill(guardian!, 'SIGKILL');
    await waitFor(() => !alive(guardian!), 5000, () => 'the guardian did not die');
    await kill9(dead);
    expect(marked(dead.mark).sort()).toEqual([...dead.pids].sort());
    // WHEN: a deploy starts its first process
    const next = await startFixture('once');
    await next.exited;
    // THEN
    await waitFor(() => marked(dead.mark).length === 0, 5000, () => `the dead run's processes still run: ${marked(dead.mark).join(' ')}`);
    expect(marked(live.mark).sort()).toEqual([...live.pids].sort());
    expect(guardians(live.mark)).toHaveLength(1);
  });
});

/**
 * No process outlives its run (issue 50): the run mark, the guardian and the reaper of
 * src/tools/run.ts, with a deploy in miniature (fixtures/run-tree.mjs: runTool starting a
 * process tree as deploy starts tofu) that is killed with SIGKILL, as an OOM kill or a killed
 * CI runner does. Real processes, no mocks; every wait polls a condition up to a deadline.
 *
 * Each test's deploys run in a PID namespace of the test's own (test/support/pid-namespace.ts,
 * issue 49). Their marks carry that namespace, and a deploy's reaper judges only marks of its
 * own namespace (stale-runs.ts), so a deploy started on the host meanwhile (an e2e run's)
 * leaves the stale marks these fixtures carry on purpose to the test's own deploys, and the
 * file runs beside other deploys. (Before, on the host, such a deploy ended them early, as it
 * should: a fixture ended by SIGTERM before its first line, a run reaped before the test's own
 * reaper started.) The last test checks that isolation from the host's side. Needs root,
 * util-linux and bash; without them every test that starts a deploy fails, naming them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GUARDIAN_GRACE_MS, GUARDIAN_NAME } from '../../../src/tools/run-guardian.js';
import { ownPidNamespace, parseRunMark, RUN_MARK_VAR, startTimeOf } from '../../../src/tools/run-mark.js';
import { findStaleRunMarks, markIn } from '../../../src/tools/stale-runs.js';
import { startPidNamespace, type PidNamespace } from '../../support/pid-namespace.js';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'run-tree.mjs');
const STALE_MARKS = join(here, 'fixtures', 'stale-marks.mjs');
const HOOKS = join(here, '..', '..', 'support', 'ts-source-hooks.mjs');
const NODE_ARGS = ['--experimental-transform-types', '--disable-warning=ExperimentalWarning', '--import', HOOKS];

interface Started {
  /** nsenter (it exits as the fixture does), or the fixture itself when started on the host. */
  readonly child: ChildProcess;
  /** The fixture's PID on the host: what this test signals and finds in /proc. */
  readonly pid: number;
  /** Its PID where it runs: what its mark names. */
  readonly innerPid: number;
  /** The processes of its tree, by their PIDs on the host. */
  readonly pids: readonly number[];
  readonly mark: string;
  readonly exited: Promise<void>;
}

const started: Started[] = [];

/** The PID namespace of the running test (made before each test that starts a deploy, ended after it). */
let ns: PidNamespace | undefined;

/** Gives each test of the calling describe a PID namespace of its own (the afterEach below ends it). */
function inOwnPidNamespace(): void {
  beforeEach(async () => {
    ns = await startPidNamespace();
  }, 60_000);
}

function namespace(): PidNamespace {
  if (ns === undefined) throw new Error('no PID namespace: call inOwnPidNamespace() in the describe');
  return ns;
}

/**
 * Starts the fixture as its own deploy (not through runTool) and waits for its "ready": in the
 * test's PID namespace, or on the host (`where: 'host'`: a deploy outside the namespace).
 * The mark, when given, reaches the fixture through `env` inside the namespace: nsenter, a
 * process of the host, never carries it.
 */
async function startFixture(mode: 'tree' | 'stubborn' | 'once' | 'idle', opts: { mark?: string; where?: 'namespace' | 'host' } = {}): Promise<Started> {
  const env = { ...process.env };
  delete env[RUN_MARK_VAR];
  const inside = opts.where !== 'host';
  const markArgs = opts.mark === undefined ? [] : [`${RUN_MARK_VAR}=${opts.mark}`];
  const child = inside
    ? namespace().spawn('env', [...markArgs, process.execPath, ...NODE_ARGS, FIXTURE, mode], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [...NODE_ARGS, FIXTURE, mode], { env: opts.mark === undefined ? env : { ...env, [RUN_MARK_VAR]: opts.mark }, stdio: ['ignore', 'pipe', 'pipe'] });
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', (code, signal) => ((exit = `exited (${signal ?? code}) before it was ready`), resolve())));
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (err += String(d)));
  // In the namespace, the fixture is nsenter's only child (forked, then `env` and node exec'd in
  // it: one PID throughout), found while it runs ("once" exits right after its "ready").
  let pid = inside ? undefined : child.pid;
  let innerPid = inside ? undefined : child.pid;
  const findFixture = () => {
    if (pid !== undefined) return;
    pid = childrenOf(child.pid!)[0];
    innerPid = pid === undefined ? undefined : namespace().innerPid(pid);
  };
  // (a fixture loads TypeScript through Node's type stripping: on a loaded host, with other test
  // workers and a cluster beside it, that took more than 15 s once, and 50 s twice under a
  // load of 10 on 2 cores; the wait ends at the line, or when the fixture ends without it)
  const t0 = Date.now();
  await waitFor(() => (findFixture(), out.includes('ready\n') || exit !== undefined), 80_000, () => `the fixture (${mode}) did not get ready in ${Date.now() - t0} ms: ${out} ${err}`);
  if (!out.includes('ready\n')) throw new Error(`the fixture (${mode}) ${exit}: ${out} ${err}`);
  if (pid === undefined || innerPid === undefined) throw new Error(`the fixture (${mode}), nsenter's child, was not found while it ran: ${out} ${err}`);
  const hostPid = (inner: number): number => {
    const p = inside ? namespace().hostPid(inner) : inner;
    if (p === undefined) throw new Error(`the fixture's process ${inner} (a PID of its namespace) was not found on the host`);
    return p;
  };
  const lines = out.split('\n');
  const s: Started = {
    child,
    pid,
    innerPid,
    pids: lines.filter((l) => l.startsWith('pid ')).map((l) => hostPid(Number(l.slice(4)))),
    mark: lines.find((l) => l.startsWith('mark '))?.slice(5) ?? '',
    exited,
  };
  started.push(s);
  return s;
}

async function kill9(s: Started): Promise<void> {
  signal(s.pid, 'SIGKILL');
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

/** Every process on the host, the namespace's included (by their PIDs on the host). */
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

function childrenOf(pid: number): number[] {
  return pidsNow().filter((p) => stat(p)?.ppid === pid);
}

/** The live processes whose environment carries exactly this mark. */
function marked(mark: string): number[] {
  return pidsNow().filter((pid) => {
    const env = read(`/proc/${pid}/environ`);
    return env !== undefined && env.toString().split('\0').includes(`${RUN_MARK_VAR}=${mark}`) && stat(pid)?.state !== 'Z';
  });
}

/**
 * The guardians of `mark` (by their command line: `sh -c ... deploy-run-guardian <mark>`). A guardian's command substitution (`$(grep ...)`) and its `sleep`
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
  // what a failed test left: the fixtures, the processes that carry their marks, then the
  // namespace with whatever else is in it
  for (const s of started.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) await kill9(s);
    for (const pid of s.mark ? marked(s.mark) : []) signal(pid, 'SIGKILL');
  }
  await ns?.close();
  ns = undefined;
}, 60_000);

/** `kill`, for a process that may have ended meanwhile. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/** A mark of the test's namespace whose deploy is gone: its init (PID 1) with another start time. */
function goneMark(): string {
  return `1.1.${namespace().inode}.${randomBytes(6).toString('hex')}`;
}

/** A mark of a stale run of the host's own namespace (this test process's PID with another start time). */
function hostGoneMark(): string {
  return `${process.pid}.1.${ownPidNamespace()}.${randomBytes(6).toString('hex')}`;
}

/** What the host's reaper would judge: the stale marks a deploy started on the host finds. */
async function staleOnHost(): Promise<string[]> {
  const own = { text: `${process.pid}.${startTimeOf(process.pid)}.${ownPidNamespace()}.0123456789ab`, pidns: ownPidNamespace()! };
  return (await findStaleRunMarks(own)).map((m) => m.text);
}

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

  describe('in a PID namespace of its own', { timeout: 120_000 }, () => {
    inOwnPidNamespace();

    it('GIVEN a process carrying the mark of a run whose deploy is gone THEN it is a stale run, but never to the deploy that inherited that mark (its own environ carries it: it would end itself); and never to a deploy of another PID namespace (the host\'s)', async () => {
      const stale = goneMark();
      namespace().spawn('env', [`${RUN_MARK_VAR}=${stale}`, 'sleep', '60'], { stdio: 'ignore' });
      await waitFor(() => marked(stale).length === 1, 5000, () => 'the marked sleep did not start');
      // the reaper's eyes inside the namespace
      const eyes = namespace().spawn(process.execPath, [...NODE_ARGS, STALE_MARKS, stale], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      eyes.stdout!.on('data', (d) => (out += String(d)));
      eyes.stderr!.on('data', (d) => (err += String(d)));
      const code = await new Promise<number | null>((resolve) => eyes.once('exit', resolve));
      expect(code, `stale-marks.mjs failed: ${out} ${err}`).toBe(0);
      const seen = JSON.parse(out) as { found: string[]; inheriting: string[] };
      expect(seen.found).toContain(stale);
      expect(seen.inheriting).not.toContain(stale);
      // the host sees the process and its mark, and does not judge it
      expect(marked(stale)).toHaveLength(1);
      expect(await staleOnHost()).not.toContain(stale);
    });
  });
});

describe('the run guardian', { timeout: 120_000 }, () => {
  inOwnPidNamespace();

  it('GIVEN a deploy whose child started a tree WHEN the deploy is killed with SIGKILL THEN within 5 s no process with its mark is left, and the guardian is gone too', async () => {
    const run = await startFixture('tree');
    // GIVEN: the whole tree carries the run's mark, and one guardian watches it from a session of its own
    expect(parseRunMark(run.mark)).toMatchObject({ pid: run.innerPid, pidns: namespace().inode });
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
    expect(parseRunMark(run.mark)?.pid).toBe(run.innerPid);
    await waitFor(() => guardians(run.mark).length === 0, 5000, () => `guardian still runs: ${guardians(run.mark).join(' ')}`);
  });

  it('GIVEN a deploy that starts no process THEN it starts no guardian either', async () => {
    const run = await startFixture('idle');
    expect(childrenOf(run.pid)).toEqual([]);
  });

  it('GIVEN a deploy started by a run (a mark whose deploy runs, as `deploy rollout` under tofu) THEN its tree keeps that mark and it starts no guardian', async () => {
    // the "outer deploy": the namespace's init, which runs for as long as the test
    const outer = `1.${startTimeOf(namespace().initPid)}.${namespace().inode}.0123456789ab`;
    const run = await startFixture('tree', { mark: outer });
    expect(run.mark).toBe(outer);
    expect(guardians(outer)).toEqual([]);
    expect(childrenOf(run.pid)).toEqual([run.pids[2]]);
    // no guardian of its own, and the "outer run" does not exit: the namespace's end ends them
  });

  it('GIVEN an inherited mark whose deploy is gone (its PID now another process) THEN the deploy takes a mark and a guardian of its own', async () => {
    const gone = goneMark();
    const run = await startFixture('tree', { mark: gone });
    expect(run.mark).not.toBe(gone);
    expect(parseRunMark(run.mark)?.pid).toBe(run.innerPid);
    expect(guardians(run.mark)).toHaveLength(1);
  });
});

describe('the reaper', { timeout: 180_000 }, () => {
  inOwnPidNamespace();

  /** A run whose deploy was killed together with its guardian: its tree stays, nobody watches it. */
  async function deadRun(): Promise<Started> {
    const dead = await startFixture('tree');
    const [guardian] = guardians(dead.mark);
    process.kill(guardian!, 'SIGKILL');
    await waitFor(() => !alive(guardian!), 5000, () => 'the guardian did not die');
    await kill9(dead);
    expect(marked(dead.mark).sort()).toEqual([...dead.pids].sort());
    return dead;
  }

  it('GIVEN a run killed together with its guardian, and a run still going WHEN the next deploy starts a process THEN the dead run\'s processes end and the live run\'s stay', async () => {
    const dead = await deadRun();
    const live = await startFixture('tree');
    // WHEN: a deploy starts its first process
    const next = await startFixture('once');
    await next.exited;
    // THEN
    await waitFor(() => marked(dead.mark).length === 0, 5000, () => `the dead run's processes still run: ${marked(dead.mark).join(' ')}`);
    expect(marked(live.mark).sort()).toEqual([...live.pids].sort());
    expect(guardians(live.mark)).toHaveLength(1);
  });

  it('GIVEN a dead run in the test\'s PID namespace WHEN a deploy on the host starts a process THEN it leaves that run alone (it judges only marks of its own namespace) and reaps a dead run of the host; WHEN then a deploy in the namespace starts one THEN that ends the run', async () => {
    const dead = await deadRun();
    // a dead run of the host's own namespace beside it: a process with the mark of a deploy that is gone
    const hostStale = hostGoneMark();
    const control = spawn('sleep', ['60'], { env: { ...process.env, [RUN_MARK_VAR]: hostStale }, stdio: 'ignore' });
    try {
      // the host sees the namespace's processes and their mark, and does not judge it
      expect(await staleOnHost()).not.toContain(dead.mark);
      // WHEN: a deploy on the host starts its first process. Its reaper has found the stale
      // runs and started their guardians (detached, from a list read at once) before it exits:
      // any guardian of the namespace's run would be seen now, or that run's processes gone.
      const host = await startFixture('once', { where: 'host' });
      await host.exited;
      expect(host.child.exitCode).toBe(0);
      expect(parseRunMark(host.mark)?.pidns).toBe(ownPidNamespace());
      // THEN: the host's dead run is reaped (by this deploy, or by another on the host first)...
      await waitFor(() => !alive(control.pid!), 5000, () => `the host's dead run (${control.pid}) still runs`);
      // ...and the namespace's is not
      expect(guardians(dead.mark)).toEqual([]);
      expect(marked(dead.mark).sort()).toEqual([...dead.pids].sort());
    } finally {
      control.kill('SIGKILL');
    }
    // WHEN: a deploy in the namespace starts its first process; THEN it ends the run
    const next = await startFixture('once');
    await next.exited;
    await waitFor(() => marked(dead.mark).length === 0, 5000, () => `the dead run's processes still run: ${marked(dead.mark).join(' ')}`);
  });
});

/**
 * A PID namespace of a test's own, for tests whose processes another program on the host must
 * not see as its own (issue 49): `unshare --pid --fork --mount-proc` with bash as its init
 * (bash collects the orphans that end in it; dash would leave them as zombies), and programs
 * started in it with `nsenter --pid --mount`, so that they see the namespace's /proc and their
 * PIDs there. The host still sees every process in it, under other PIDs; `hostPid` and
 * `innerPid` translate (the `NSpid` line of /proc/<pid>/status).
 *
 * The run guardian's tests need it: their deploys in miniature carry the marks of dead runs on
 * purpose, and a deploy's reaper judges only marks of its own PID namespace (run-mark.ts), so
 * a deploy started on the host meanwhile (an e2e run's) leaves them to the test's own.
 *
 * The namespace ends with `close()`, or when the test process ends however it ends: the init
 * reads a pipe from it and exits at end of file, and the kernel kills whatever is left in a
 * PID namespace whose init is gone. Needs root (CAP_SYS_ADMIN), util-linux and bash; without
 * them `startPidNamespace` fails naming what is missing (never a skip).
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface PidNamespace {
  /** The inode of the namespace: what `/proc/self/ns/pid` names in it, and a run mark made in it carries. */
  readonly inode: string;
  /** Its init (PID 1 inside), by its PID on the host. */
  readonly initPid: number;
  /**
   * Starts `file args` inside, through nsenter: the process returned is nsenter, on the host,
   * which waits for the program (its only child) and exits as it does (with its signal, too).
   * The program's working directory is `options.cwd` or this process's.
   */
  spawn(file: string, args: readonly string[], options: SpawnOptions): ChildProcess;
  /** The PID on the host of the process whose PID in the namespace is `pid`, or undefined. */
  hostPid(pid: number): number | undefined;
  /** The PID in the namespace of the process `hostPid` on the host, or undefined when it is not in it. */
  innerPid(hostPid: number): number | undefined;
  /** Ends the namespace: its init exits, and the kernel kills whatever is left in it. */
  close(): Promise<void>;
}

const NEEDS = 'root (CAP_SYS_ADMIN: unshare --pid), util-linux (unshare, nsenter) and bash';

/** Makes a PID namespace and waits until its init runs; fails naming what is missing. */
export async function startPidNamespace(timeoutMs = 30_000): Promise<PidNamespace> {
  // stdin: the pipe whose end of file ends the init; an environment with nothing of ours;
  // --norc: with a socket as stdin (Node's pipes), bash reads ~/.bashrc as if rshd started it
  const holder = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--kill-child', '--', 'bash', '--norc', '--noprofile', '-c', 'echo ready; while read -r _; do :; done'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  let out = '';
  let err = '';
  let ended: string | undefined;
  holder.stdout!.on('data', (d) => (out += String(d)));
  holder.stderr!.on('data', (d) => (err += String(d)));
  holder.stdin!.on('error', () => {});
  const exited = new Promise<void>((resolve) => {
    holder.once('error', (e: NodeJS.ErrnoException) => {
      ended = e.code === 'ENOENT' ? 'unshare was not found on PATH' : `unshare did not start: ${e.message}`;
      resolve();
    });
    holder.once('exit', (code, signal) => {
      ended ??= `unshare ended (${signal ?? `exit code ${code}`})`;
      resolve();
    });
  });
  const deadline = Date.now() + timeoutMs;
  while (!out.includes('ready\n') && ended === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const fail = (why: string): never => {
    holder.kill('SIGKILL');
    throw new Error(`this test needs a PID namespace of its own, which needs ${NEEDS}: ${why}${err.trim() ? `: ${err.trim()}` : ''}`);
  };
  if (!out.includes('ready\n')) fail(ended ?? `its init did not say "ready" within ${timeoutMs} ms`);
  const initPid = childrenOf(holder.pid!)[0];
  if (initPid === undefined) fail(`the init of the namespace (a child of unshare, ${holder.pid}) was not found in /proc`);
  const inode = pidNamespaceOf(initPid!);
  if (inode === undefined || inode === pidNamespaceOf(process.pid)) fail(`the init ${initPid} is not in a PID namespace of its own (${inode})`);
  const nsenter = spawnSync('nsenter', [`--target=${initPid}`, '--pid', '--mount', '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: timeoutMs });
  if (nsenter.error !== undefined || nsenter.status !== 0) {
    const why = (nsenter.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ? 'nsenter was not found on PATH' : `nsenter into it failed (${nsenter.error?.message ?? `exit code ${nsenter.status}`}): ${nsenter.stderr.trim()}`;
    holder.stdin!.end();
    fail(why);
  }

  return {
    inode: inode!,
    initPid: initPid!,
    spawn(file, args, options) {
      const { cwd, ...rest } = options;
      return spawn('nsenter', [`--target=${initPid}`, '--pid', '--mount', `--wd=${String(cwd ?? process.cwd())}`, '--', file, ...args], rest);
    },
    hostPid(pid) {
      return pidsNow().find((p) => pidNamespaceOf(p) === inode && nsPids(p)?.at(-1) === pid);
    },
    innerPid(hostPid) {
      return pidNamespaceOf(hostPid) === inode ? nsPids(hostPid)?.at(-1) : undefined;
    },
    async close() {
      holder.stdin!.end();
      const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000).unref())]);
      if (!gone) {
        // --kill-child: the init dies with unshare, and the namespace with its init
        holder.kill('SIGKILL');
        await exited;
      }
    },
  };
}

function pidsNow(): number[] {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);
}

function childrenOf(pid: number): number[] {
  return pidsNow().filter((p) => {
    try {
      const text = readFileSync(`/proc/${p}/stat`, 'utf8');
      return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
}

/** The inode of the PID namespace of `pid` (its /proc/<pid>/ns/pid), or undefined. */
function pidNamespaceOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`).match(/\[(\d+)\]/)?.[1];
  } catch {
    return undefined;
  }
}

/** The PIDs of `pid` in each namespace from the host's down to its own (`NSpid:` of its status). */
function nsPids(pid: number): number[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('NSpid:'));
    return line?.slice('NSpid:'.length).trim().split(/\s+/).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * The processes under one process, read from /proc: the one reader of `/proc/<pid>/stat` for the
 * bench's samplers (plan-profile.ts: CPU per program; apply-timeline.ts: a run's timeline).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of utime and stime (Linux's USER_HZ). */
export const CLK_TCK = 100;

export interface ProcSample {
  comm: string;
  ppid: number;
  /** utime + stime, in clock ticks */
  ticks: number;
  /** the command line, when asked for */
  args?: string[];
}

export function readProc(pid: number, withArgs = false): ProcSample | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = s.lastIndexOf(')');
    const comm = s.slice(s.indexOf('(') + 1, close);
    const f = s.slice(close + 2).split(' ');
    // after the comm: state(0) ppid(1) ... utime(11) stime(12)
    const sample: ProcSample = { comm, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
    if (withArgs) sample.args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
    return sample;
  } catch {
    return undefined;
  }
}

/**
 * Every process now under `rootPid` (itself included). `parentOf` names the parent of a process
 * that is gone from /proc but was seen before, so that its children still count.
 */
export function processesUnder(rootPid: number, opts: { withArgs?: boolean; parentOf?: (pid: number) => number | undefined } = {}): Map<number, ProcSample> {
  const all = new Map<number, ProcSample>();
  for (const e of readdirSync('/proc')) {
    const pid = Number(e);
    if (!Number.isInteger(pid)) continue;
    const p = readProc(pid, opts.withArgs);
    if (p) all.set(pid, p);
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 30; hops++) {
      if (p === rootPid) return true;
      p = all.get(p)?.ppid ?? opts.parentOf?.(p) ?? 0;
    }
    return false;
  };
  return new Map([...all].filter(([pid]) => inTree(pid)));
}

/** The host's CPU time since boot, from /proc/stat's first line: busy and idle (idle + iowait), in ticks. */
export function readHostCpu(): { busy: number; idle: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest times are inside user and nice)
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return { busy, idle };
}

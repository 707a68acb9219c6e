/**
 * What a deploy run started, seen from outside: the process table (/proc), a run's process
 * tree followed while it runs (its children are re-parented once it ends, so the tree must be
 * sampled before), and the processes that inherited an environment marker the test gave the
 * run. The leftover checks of the interrupt and kill tests (deploy-interrupt-random,
 * deploy-kill9) use these.
 */
import { readdir, readFile } from 'node:fs/promises';

export interface Proc {
  readonly pid: number;
  readonly ppid: number;
  /** Start time in clock ticks since boot: a PID and its start time name one process. */
  readonly start: string;
  readonly state: string;
  readonly comm: string;
}

/** Every process now running, from /proc/<pid>/stat. */
export async function processTable(): Promise<Map<number, Proc>> {
  const table = new Map<number, Proc>();
  for (const name of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const close = stat.lastIndexOf(')');
    if (close < 0) continue;
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    // after "pid (comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime (proc(5))
    const f = stat.slice(close + 2).split(' ');
    table.set(Number(name), { pid: Number(name), ppid: Number(f[1]), start: f[19] ?? '', state: f[0] ?? '', comm });
  }
  return table;
}

/** The processes below `root` in `table`. */
export function descendantsOf(root: number, table: Map<number, Proc>): Proc[] {
  const out: Proc[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const p of table.values()) {
      if (p.ppid === parent) {
        out.push(p);
        queue.push(p.pid);
      }
    }
  }
  return out;
}

/** The live (not zombie) processes whose environment holds `variable=value`. */
export async function markedProcesses(variable: string, value: string): Promise<Proc[]> {
  const table = await processTable();
  const out: Proc[] = [];
  for (const p of table.values()) {
    if (p.state === 'Z') continue;
    const env = await readFile(`/proc/${p.pid}/environ`, 'utf8').catch(() => '');
    if (env.split('\0').includes(`${variable}=${value}`)) out.push(p);
  }
  return out;
}

/** The processes of `seen` (a PID with its start time) that still run (not zombies). */
export async function stillRunning(seen: Iterable<Proc>): Promise<Proc[]> {
  const now = await processTable();
  return [...seen].filter((p) => {
    const q = now.get(p.pid);
    return q !== undefined && q.start === p.start && q.state !== 'Z';
  });
}

/**
 * Follows the process tree below `pid` every 200 ms until `stop()`, which returns every
 * process seen in it (keyed by PID and start time); `argv()` the command line of each, as
 * first seen.
 */
export function followTree(pid: number): { stop: () => Map<string, Proc>; argv: () => Map<string, readonly string[]> } {
  const seen = new Map<string, Proc>();
  const argv = new Map<string, readonly string[]>();
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    void processTable()
      .then(async (t) => {
        for (const p of descendantsOf(pid, t)) {
          const key = `${p.pid}:${p.start}`;
          seen.set(key, p);
          if (!argv.has(key)) argv.set(key, (await readFile(`/proc/${p.pid}/cmdline`, 'utf8').catch(() => '')).split('\0'));
        }
      })
      .finally(() => (polling = false));
  }, 200);
  return {
    stop: () => {
      clearInterval(poll);
      return seen;
    },
    argv: () => argv,
  };
}

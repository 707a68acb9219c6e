/**
 * The run mark: one variable, `DEPLOY_RUN_MARK`, in the environment of every process a deploy
 * run starts (run.ts sets it), which tofu hands on to its providers and its local-exec steps
 * (skopeo, image builds, `deploy rollout`), and they to theirs. It names the deploy process
 * that started the run, so that what the run started can be found by the mark alone (in
 * /proc/<pid>/environ), whoever its parent is now: after a kill -9 of deploy its children are
 * re-parented to init and their process group no longer says whose they were.
 *
 * The mark is `<pid>.<start>.<pidns>.<random>`: the deploy process's PID, its start time in
 * clock ticks since boot (proc(5) `stat` field 22: a PID and its start time name one process,
 * so a PID used again later does not make a dead run look alive), the inode of its PID
 * namespace (a PID means something only in its namespace: a run in a container is not judged
 * from the host), and 48 random bits (two runs never share a mark).
 *
 * Linux only (/proc); elsewhere there is no mark and nothing is watched.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';

/** The environment variable that carries the mark. */
export const RUN_MARK_VAR = 'DEPLOY_RUN_MARK';

/** A run mark, parsed. */
export interface RunMark {
  /** The whole mark, as it is in the environment. */
  readonly text: string;
  /** The deploy process that started the run. */
  readonly pid: number;
  /** Its start time, clock ticks after boot. */
  readonly start: string;
  /** The inode of its PID namespace. */
  readonly pidns: string;
}

const MARK_FORM = /^([1-9]\d{0,9})\.(\d{1,20})\.(\d{1,20})\.([0-9a-f]{12})$/;

/** Parses a mark; anything else (unset, hand-written, a future form) is undefined. */
export function parseRunMark(text: string | undefined): RunMark | undefined {
  const m = text?.match(MARK_FORM);
  if (!m) return undefined;
  return { text: text!, pid: Number(m[1]), start: m[2]!, pidns: m[3]! };
}

/** A new mark for this process, or undefined where there is no /proc to find it by. */
export function newRunMark(): RunMark | undefined {
  const start = startTimeOf(process.pid);
  const pidns = ownPidNamespace();
  if (start === undefined || pidns === undefined) return undefined;
  return parseRunMark(`${process.pid}.${start}.${pidns}.${randomBytes(6).toString('hex')}`);
}

/** The inode of this process's PID namespace (`pid:[4026531836]`), or undefined without /proc. */
export function ownPidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid').match(/\[(\d+)\]/)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Whether the deploy process a mark names still runs: the same PID with the same start time,
 * and not a zombie (killed, not yet collected by its parent: it starts nothing any more).
 * Only meaningful for a mark of this PID namespace (`mark.pidns === ownPidNamespace()`).
 */
export function markOwnerRuns(mark: RunMark): boolean {
  const stat = readStat(mark.pid);
  return stat !== undefined && stat.start === mark.start && stat.state !== 'Z';
}

/** The start time of `pid` (clock ticks after boot), or undefined when it does not run. */
export function startTimeOf(pid: number): string | undefined {
  return readStat(pid)?.start;
}

function readStat(pid: number): { readonly state: string; readonly start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // after "pid (comm) " (comm may hold spaces and parentheses: cut at the last ')'):
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice num_threads itrealvalue starttime (proc(5))
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = fields[19];
  return state !== undefined && start !== undefined && /^\d+$/.test(start) ? { state, start } : undefined;
}

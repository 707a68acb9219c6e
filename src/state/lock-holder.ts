/**
 * Is the process that holds a lock still there? deploy can tell only for a lock taken on this
 * host by a process it can name: `Who` in deploy's default form `user@host:pid`
 * (src/state/run-lock.ts runIdentity), or deploy's own `Info` (`..., pid <n> on <host>`, also
 * written when DEPLOY_RUN_ID names the run). Any other holder (another host, tofu's own
 * `user@host` without a PID, a CD run name without a PID) is never guessed at.
 */
import { hostname } from 'node:os';
import { shq } from '../contract/shell.js';
import { processRuns } from '../process-alive.js';
import type { LockInfo } from './lock-info.js';
import type { StateSource } from './source/state-source.js';

/** The process a lock names, when it names one. */
export interface HolderProcess {
  readonly host: string;
  readonly pid: number;
}

export type HolderJudgement =
  /** On this host, and no process with that PID runs: the lock is stale. */
  | { readonly kind: 'gone'; readonly process: HolderProcess }
  /** On this host, and a process with that PID runs (it may be the run, or a later process that got its PID). */
  | { readonly kind: 'running'; readonly process: HolderProcess }
  /** Taken on another host: only that host can tell. */
  | { readonly kind: 'other-host'; readonly process: HolderProcess }
  /** The lock names no process (tofu's `user@host`, a CD run name). */
  | { readonly kind: 'unknown' };

/** What the judgement needs of the machine: its host name and whether a PID runs. */
export interface HostFacts {
  readonly hostname: string;
  isRunning(pid: number): boolean;
}

const WHO_FORM = /^[^@\s]*@([^@:\s]+):([1-9]\d{0,9})$/;
const INFO_FORM = /pid ([1-9]\d{0,9}) on ([^\s,]+)$/;

/** The host and PID a lock names, from `Who` (user@host:pid) or deploy's own `Info`. */
export function holderProcess(info: LockInfo): HolderProcess | undefined {
  const who = info.Who?.match(WHO_FORM);
  if (who) return { host: who[1]!, pid: Number(who[2]) };
  const said = info.Version === 'deploy' ? info.Info?.match(INFO_FORM) : undefined;
  if (said) return { host: said[2]!, pid: Number(said[1]) };
  return undefined;
}

/** Whether the holder of `info` is gone, running, elsewhere or unknown. */
export function judgeHolder(info: LockInfo, facts: HostFacts = thisHost()): HolderJudgement {
  const named = holderProcess(info);
  if (!named) return { kind: 'unknown' };
  if (named.host !== facts.hostname) return { kind: 'other-host', process: named };
  return facts.isRunning(named.pid) ? { kind: 'running', process: named } : { kind: 'gone', process: named };
}

/** This machine: os.hostname() and signal 0 (ESRCH: no such process; EPERM: it runs, as another user). */
export function thisHost(): HostFacts {
  return {
    hostname: hostname(),
    isRunning: processRuns,
  };
}

/** One clause for messages: why the lock is (or is not) known to be stale. */
export function describeJudgement(j: HolderJudgement): string {
  switch (j.kind) {
    case 'gone':
      return `its process is gone (no pid ${j.process.pid} runs on this host, ${j.process.host}): the lock is stale`;
    case 'running':
      return `pid ${j.process.pid} runs on this host: wait for that run to end`;
    case 'other-host':
      return `it was taken on ${j.process.host}, not on this host: only there can one tell whether pid ${j.process.pid} still runs; wait for that run, or check on ${j.process.host}`;
    case 'unknown':
      return 'the lock names no process deploy can check: wait for that run to end';
  }
}

/**
 * The one command that frees the stale lock on `key` of a source: `deploy state unlock
 * --force-stale`, which judges the holder again before it releases anything.
 */
export function staleUnlockCommand(source: Pick<StateSource, 'operatorCommand'>, key: string): string {
  return source.operatorCommand(`unlock --force-stale --key ${shq(key)}`);
}

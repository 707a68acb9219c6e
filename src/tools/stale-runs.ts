/**
 * The reaper's eyes: the runs whose processes are still there although their deploy is gone.
 * The backstop for the run guardian (run-guardian.ts): when a kill took the guardian too (a
 * CI runner that kills every process of the job, an operator's `kill -9` of both), the run's
 * processes carry its mark for ever, and the next deploy on this machine that starts a
 * process finds them here and hands their mark to a guardian of its own (run.ts).
 *
 * A run is stale when its mark names a deploy process of this PID namespace that no longer
 * runs with that start time. A mark of another namespace, of a live deploy, or in a form this
 * program does not know is never judged; nor the mark this process inherited: its own
 * /proc/<pid>/environ carries that mark for as long as it lives (the environment a process was
 * started with), so a guardian of that mark would end this very deploy (seen: a deploy started
 * with the mark of a run whose deploy was gone took SIGTERM before its first line, one start in
 * five). That run's other processes are left to the next deploy started outside of it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { markOwnerRuns, parseRunMark, RUN_MARK_VAR, type RunMark } from './run-mark.js';

const NEEDLE = Buffer.from(`${RUN_MARK_VAR}=`);

/** The distinct marks of stale runs that processes of this user still carry (never `own`, nor `inherited`: this process's own). */
export async function findStaleRunMarks(own: Pick<RunMark, 'text' | 'pidns'>, inherited?: string): Promise<RunMark[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  const seen = new Set<string>();
  await Promise.all(
    names
      .filter((n) => /^\d+$/.test(n))
      .map(async (n) => {
        // another user's environ is unreadable (EACCES), a process may end meanwhile (ENOENT)
        const env = await readFile(`/proc/${n}/environ`).catch(() => undefined);
        const text = env && markIn(env);
        if (text !== undefined) seen.add(text);
      }),
  );
  const stale: RunMark[] = [];
  for (const text of seen) {
    const mark = parseRunMark(text);
    if (mark && mark.text !== own.text && mark.text !== inherited && mark.pidns === own.pidns && !markOwnerRuns(mark)) stale.push(mark);
  }
  return stale;
}

/** The value of DEPLOY_RUN_MARK in one NUL-separated environ, if it has one. */
export function markIn(environ: Buffer): string | undefined {
  let at = environ.indexOf(NEEDLE);
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(NEEDLE, at + 1);
  if (at < 0) return undefined;
  const end = environ.indexOf(0, at);
  return environ.subarray(at + NEEDLE.length, end < 0 ? environ.length : end).toString('utf8');
}

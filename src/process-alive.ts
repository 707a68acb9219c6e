/**
 * Whether a process of this machine runs, by its PID: signal 0 sends nothing, it only asks.
 * ESRCH: no such process. EPERM: it runs, as another user. Any other answer counts as running,
 * so that a lock's holder or a node's rollout step is never called gone on a doubt (the caller
 * then waits for it, or says it runs, rather than taking over from a live process).
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

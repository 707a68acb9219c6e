/**
 * What systemd was still waiting for when a boot did not finish in time: its job queue,
 * `systemctl list-jobs`, read from the pod before the rollback replaces it. A boot that
 * never ends (a start job that never returns) leaves systemd `starting` with no failed unit
 * and an empty container log, so the queue is the only evidence that names the culprit.
 */

/** One queued job: `systemctl list-jobs --no-legend` prints JOB UNIT TYPE STATE (systemctl(1)). */
export interface SystemdJob {
  readonly unit: string;
  /** `start`, `stop`, `restart`, ... */
  readonly type: string;
  /** `running` (being executed now) or `waiting` (for another job). */
  readonly state: string;
}

export const LIST_JOBS_COMMAND = ['systemctl', 'list-jobs', '--no-legend', '--no-pager'] as const;

/** The jobs in the command's lines; lines of another shape are skipped. */
export function parseJobLines(lines: readonly string[]): SystemdJob[] {
  const jobs: SystemdJob[] = [];
  for (const line of lines) {
    const [id, unit, type, state, ...rest] = line.trim().split(/\s+/);
    if (!id || !/^\d+$/.test(id) || !unit || !type || !state || rest.length > 0) continue;
    jobs.push({ unit, type, state });
  }
  // running jobs first: they are what the waiting ones (the targets) wait for
  return jobs.sort((a, b) => Number(b.state === 'running') - Number(a.state === 'running'));
}

/** "hang.service (start, running); 2 more jobs waiting for it" for the report's message. */
export function describeJobs(jobs: readonly SystemdJob[]): string {
  const running = jobs.filter((j) => j.state === 'running');
  const shown = running.length > 0 ? running.slice(0, 3) : jobs.slice(0, 3);
  const rest = jobs.length - shown.length;
  const list = shown.map((j) => `${j.unit} (${j.type}, ${j.state})`).join(', ');
  return rest > 0 ? `${list}; ${rest} more job${rest === 1 ? '' : 's'} waiting` : list;
}

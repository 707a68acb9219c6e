import { describe, expect, it } from 'vitest';
import { describeJobs, parseJobLines } from '../../../../src/rollout/classify/systemd-jobs.js';

// `systemctl list-jobs --no-legend --no-pager` in a pod whose hang.service never returns
// (Debian 12, systemd 252), as the rollout step reads it
const LINES = ['  1 graphical.target     start waiting', '101 hang.service         start running', '  2 multi-user.target    start waiting'];

describe('systemd job queue', () => {
  it('GIVEN list-jobs lines THEN the running job comes first, then the waiting targets', () => {
    expect(parseJobLines(LINES)).toEqual([
      { unit: 'hang.service', type: 'start', state: 'running' },
      { unit: 'graphical.target', type: 'start', state: 'waiting' },
      { unit: 'multi-user.target', type: 'start', state: 'waiting' },
    ]);
  });

  it('skips lines of another shape (a legend, "No jobs running.")', () => {
    expect(parseJobLines(['JOB UNIT TYPE STATE', 'No jobs running.', '', '3 jobs listed.'])).toEqual([]);
  });

  it('names what systemd waits for, and how many jobs wait behind it', () => {
    expect(describeJobs(parseJobLines(LINES))).toBe('hang.service (start, running); 2 more jobs waiting');
    expect(describeJobs(parseJobLines(['7 a.service start running']))).toBe('a.service (start, running)');
  });
});

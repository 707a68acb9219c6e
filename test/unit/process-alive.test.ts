import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { processRuns } from '../../src/process-alive.js';

describe('processRuns', () => {
  it('is true for this process and for PID 1 (another user\'s or not: EPERM still means it runs)', () => {
    expect(processRuns(process.pid)).toBe(true);
    expect(processRuns(1)).toBe(true);
  });

  it('is false once a child has exited and been reaped', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid!;
    await once(child, 'exit');
    expect(processRuns(pid)).toBe(false);
  });
});

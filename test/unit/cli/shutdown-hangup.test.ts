/**
 * A hangup stops deploy cleanly, like SIGTERM (src/cli/main.ts): a closed terminal or a CD
 * runner that kills the step's shell must not kill deploy before it releases its state lock.
 * Shown on `deploy state serve`, which serves until its signal aborts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DEPLOY_BIN as deploy } from '../../support/deploy-bin.js';

describe('deploy and SIGHUP', () => {
  it('GIVEN a running deploy WHEN it gets SIGHUP THEN it says so and stops cleanly, as on SIGTERM', async () => {
    const data = mkdtempSync(join(tmpdir(), 'hangup-'));
    const child = execa(deploy, ['state', 'serve', '--listen', '127.0.0.1:0', '--data', data], { reject: false, timeout: 60_000 });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => { if (String(d).includes('http://')) resolve(); });
      void child.then((r) => reject(new Error(`serve ended before it listened: ${r.stderr}`)));
    });
    child.kill('SIGHUP');
    const r = await child;
    expect(r.signal).toBeUndefined();
    expect(r.stderr).toContain('SIGHUP received: stopping cleanly');
    // a server's clean stop is its normal end (a unit manager reads 143 as a failure)
    expect(r.exitCode, r.stderr).toBe(0);
    const term = execa(deploy, ['state', 'serve', '--listen', '127.0.0.1:0', '--data', data], { reject: false, timeout: 60_000 });
    await new Promise<void>((resolve) => term.stdout?.on('data', (d: Buffer) => { if (String(d).includes('http://')) resolve(); }));
    term.kill('SIGTERM');
    expect((await term).exitCode).toBe(r.exitCode);
  });
});

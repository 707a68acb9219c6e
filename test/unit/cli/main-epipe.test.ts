/**
 * A closed pipe (`deploy --help | head -1`): the real bin/deploy exits quietly, 0 for --help,
 * without Node's "Warning: Detected unsettled top-level await" (its exit 13: the end of a run
 * waited for a 'drain' that a closed pipe never sends).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEPLOY_BIN } from '../../support/deploy-bin.js';

/** Runs deploy with stdout a pipe that the reader closes after its first chunk, as `head -1` does. */
function withClosedPipe(args: string[]): Promise<{ code: number | null; signal: string | null; first: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(DEPLOY_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    let stderr = '';
    child.stdout.once('data', (d: Buffer) => {
      first = String(d).split('\n')[0]!;
      child.stdout.destroy();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, first, stderr });
    });
  });
}

describe('deploy writing into a closed pipe', () => {
  it.each([[['--help']], [['state', 'unlock', '--help']], [['state', 'migrate', '--help']]])('GIVEN %j | head -1 THEN exit 0 and nothing on stderr', async (args) => {
    const r = await withClosedPipe(args);
    expect(r.first).toMatch(/^Usage: deploy/);
    expect(r.stderr).toBe('');
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
  });
});

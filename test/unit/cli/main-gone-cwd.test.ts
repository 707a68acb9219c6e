/**
 * deploy started in a directory that was removed meanwhile (a shell left in a deleted
 * checkout or temp dir): one line that says what to do and exit 2, never a stack trace
 * (bin/deploy.js checks the directory before anything reads it).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const deployJs = fileURLToPath(new URL('../../../bin/deploy.js', import.meta.url));
const node = fileURLToPath(new URL('../../../node_modules/node/bin/node', import.meta.url));

describe('deploy in a removed directory', () => {
  it('GIVEN a current directory that no longer exists WHEN deploy runs THEN it says so in one line and exits 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gone-cwd-'));
    // the shell enters the directory, removes it, and then starts deploy in it
    const r = await execa('sh', ['-c', 'cd "$1" && rmdir "$1" && exec "$2" "$3" plan', 'sh', dir, node, deployJs], { reject: false, timeout: 60_000 });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('deploy: the current directory no longer exists');
    expect(r.stderr).toContain('cd to an existing directory');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

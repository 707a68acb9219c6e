/**
 * toolchain/lib/mounts.sh: the one unmount_under of the cluster's `down` (several directories,
 * one below the other) and of the image builds (remove_tree of a tree with mounts left in it).
 * Real tmpfs mounts (the tests run as root, like the cluster's).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runTool } from '../../../../src/tools/run.js';

const mountsSh = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'toolchain', 'lib', 'mounts.sh');

function bash(script: string) {
  return runTool('bash', ['-c', `set -euo pipefail; . "${mountsSh}"; ${script}`], { timeoutMs: 30_000, reject: false });
}

const made: string[] = [];
function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'mounts-sh-'));
  made.push(d);
  return d;
}
afterEach(async () => {
  for (const d of made.splice(0)) {
    await bash(`unmount_under "${d}"`);
    rmSync(d, { recursive: true, force: true });
  }
});

const mountedUnder = (d: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m === d || m.startsWith(`${d}/`));

describe('toolchain/lib/mounts.sh', () => {
  it('GIVEN nested and stacked mounts under two directories, one inside the other WHEN unmount_under runs THEN none is left and nothing is logged', async () => {
    const d = scratch();
    for (const p of ['a', 'c']) mkdirSync(join(d, p));
    const r = await bash(`
      mount -t tmpfs t "${d}/a"; mkdir "${d}/a/b"; mount -t tmpfs t "${d}/a/b"
      mount -t tmpfs t "${d}/c"; mount -t tmpfs t "${d}/c"
      unmount_under "${d}" "${d}/a"`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(mountedUnder(d)).toEqual([]);
  });

  it('GIVEN a tree with a mount in it WHEN remove_tree runs THEN the tree is gone and the mounted file system untouched', async () => {
    const d = scratch();
    const r = await bash(`mkdir -p "${d}/t/m"; mount -t tmpfs t "${d}/t/m"; touch "${d}/t/m/f"; remove_tree "${d}/t"`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(d, 't'))).toBe(false);
    expect(mountedUnder(d)).toEqual([]);
  });

  it('refuses to remove / or an empty path', async () => {
    for (const p of ['/', '']) {
      const r = await bash(`remove_tree "${p}"`);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('remove_tree: refusing');
    }
  });
});

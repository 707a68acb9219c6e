import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runTool } from '../../../../src/tools/run.js';

const cacheSh = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'toolchain', 'lib', 'cache.sh');

/** Runs a bash snippet with toolchain/cache.sh sourced and DEPLOY_CACHE_DIR set. */
function bash(cache: string, script: string) {
  return runTool('bash', ['-c', `set -euo pipefail; . "${cacheSh}"; ${script}`], {
    env: { DEPLOY_CACHE_DIR: cache },
    timeoutMs: 20_000,
    reject: false,
  });
}

describe('toolchain/lib/cache.sh build_once', () => {
  it('builds once, then skips while the output exists', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cache-sh-'));
    const cache = join(root, 'cache');
    const count = join(root, 'count');
    const build = `build_once demo/1.0/demo sh -c 'echo run >> "${count}"; echo built > "$BUILD_OUT"'`;
    const first = await bash(cache, build);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toMatch(/built demo\/1\.0\/demo in \d+s/);
    const second = await bash(cache, build);
    expect(second.stderr).toContain('skipped demo/1.0/demo (present)');
    expect(readFileSync(join(cache, 'demo/1.0/demo'), 'utf8')).toBe('built\n');
    expect(readFileSync(count, 'utf8')).toBe('run\n');
  });

  it('leaves nothing behind when the build fails, and returns its status', async () => {
    const cache = join(mkdtempSync(join(tmpdir(), 'cache-sh-')), 'cache');
    const r = await bash(cache, `build_once demo/1.0/demo sh -c 'echo half > "$BUILD_OUT"; exit 7'`);
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain('FAILED demo/1.0/demo');
    expect(existsSync(join(cache, 'demo/1.0/demo'))).toBe(false);
    expect(readdirSync(join(cache, '.partial'))).toEqual([]);
  });

  it('runs one builder when two ask for the same key at once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cache-sh-'));
    const cache = join(root, 'cache');
    const count = join(root, 'count');
    const build = `build_once demo/2.0/demo sh -c 'echo run >> "${count}"; sleep 0.5; echo ok > "$BUILD_OUT"'`;
    const [a, b] = await Promise.all([bash(cache, build), bash(cache, build)]);
    expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
    expect(readFileSync(count, 'utf8')).toBe('run\n');
    expect(`${a.stderr}${b.stderr}`).toContain('built by another process');
  });

  it('resolves DEPLOY_CACHE_DIR like src/tools/discover.ts', async () => {
    const r = await runTool('bash', ['-c', `. "${cacheSh}"; echo "$DEPLOY_CACHE_DIR"`], {
      env: { DEPLOY_CACHE_DIR: undefined, XDG_CACHE_HOME: '/x' },
      timeoutMs: 10_000,
    });
    expect(r.stdout).toBe('/x/k8s-deployer');
  });
});

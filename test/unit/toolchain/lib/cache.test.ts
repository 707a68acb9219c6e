import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runTool } from '../../../../src/tools/run.js';
import { locksOf, lockWaiters, release, waitForReleaseShell } from '../../../support/barrier.js';
import { until } from '../../../support/until.js';

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
    const released = join(root, 'released');
    const lock = join(cache, '.locks', 'demo_2.0_demo.lock');
    // the builder runs until the test releases it, which it does once the other caller is
    // seen blocked on the key's lock: so the two calls overlap however slow the machine is
    const build = `build_once demo/2.0/demo sh -c 'echo run >> "${count}"; ${waitForReleaseShell(released, 15)}; echo ok > "$BUILD_OUT"'`;
    const ended: string[] = [];
    const call = (caller: string) => bash(cache, build).finally(() => ended.push(caller));
    const callers = [call('the first'), call('the second')] as const;
    const runs = () => (existsSync(count) ? readFileSync(count, 'utf8') : '');
    const locks = () => (existsSync(lock) ? locksOf(lock).join(' | ') || 'none' : 'no lock file');
    try {
      await until(`one builder running and the other caller blocked on the lock of its key (a "->" line of ${lock} in /proc/locks)`, () => runs() === 'run\n' && existsSync(lock) && lockWaiters(lock) === 1, {
        timeoutMs: 10_000,
        failIf: () => (runs().split('\n').length > 2 ? 'both callers ran the builder' : ended.length > 0 ? `${ended.join(' and ')} call ended before the builder was released` : undefined),
        seen: () => `builder runs ${JSON.stringify(runs())}, the lock's lines in /proc/locks: ${locks()}`,
      });
    } finally {
      release(released);
      await Promise.allSettled(callers);
    }
    const [a, b] = await Promise.all(callers);
    expect([a.exitCode, b.exitCode], `${a.stderr}${b.stderr}`).toEqual([0, 0]);
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

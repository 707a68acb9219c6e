/**
 * toolchain/lib/daemon.sh (the daemons of the local cluster, the registry and the spire node):
 * daemon_pid (and require_alive, which every `up` wait calls) never reports a live daemon as
 * dead, also before it has exec'ed its program (the pidfile's start time identifies it from
 * the fork on). A loaded first run lost that race: `up` failed with "etcd exited" 20 ms after
 * starting an etcd that ran for minutes.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { runTool } from '../../../../src/tools/run.js';

const procSh = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'toolchain', 'lib', 'daemon.sh');

/** Runs a bash snippet with daemon.sh sourced and S (its state directory) set. */
function bash(s: string, script: string, pathPrefix = '') {
  return runTool('bash', ['-c', `set -euo pipefail; S="${s}"; . "${procSh}"; ${script}`], {
    env: { PATH: `${pathPrefix}${process.env.PATH ?? ''}` },
    timeoutMs: 60_000,
    reject: false,
  });
}

const sleepBin = '/bin/sleep';
const cleanups: (() => Promise<unknown>)[] = [];
// Newest first: the busy loops go before the daemons are stopped.
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

function stateDir(): string {
  const s = mkdtempSync(join(tmpdir(), 'proc-sh-'));
  cleanups.push(() => bash(s, 'for f in "$S"/run/*.pid; do [ -e "$f" ] || continue; n=${f##*/}; stop_daemon "${n%.pid}" 2; done'));
  return s;
}

describe('toolchain/lib/daemon.sh start_daemon', () => {
  it('GIVEN setsid takes a second to exec WHEN daemon_pid runs right after start_daemon THEN it finds the live daemon', async () => {
    const s = stateDir();
    // A setsid that is slow to exec: what a loaded machine does to the real one.
    const shim = join(s, 'shim');
    mkdirSync(shim);
    const realSetsid = (await execa('bash', ['-c', 'command -v setsid'])).stdout.trim();
    writeFileSync(join(shim, 'setsid'), `#!/bin/sh\nsleep 1\nexec ${realSetsid} "$@"\n`);
    chmodSync(join(shim, 'setsid'), 0o755);
    const r = await bash(s, `start_daemon slow env DEMO=1 ${sleepBin} 30; daemon_pid slow; require_alive slow; echo alive`, `${shim}:`);
    expect(r.stderr).not.toContain('exited');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^\d+\nalive$/);
  });

  it('GIVEN both cores busy WHEN ten daemons start THEN each is reported alive at once', async () => {
    const s = stateDir();
    const loops = [0, 1, 2, 3].map(() => execa('sh', ['-c', 'while :; do :; done'], { reject: false }));
    cleanups.push(async () => {
      for (const l of loops) l.kill('SIGKILL');
      await Promise.all(loops);
    });
    const script = Array.from({ length: 10 }, (_, i) => `start_daemon d${i} env N=${i} ${sleepBin} 30; daemon_pid d${i} >/dev/null || { echo "d${i} reported dead"; exit 1; }`).join('\n');
    const r = await bash(s, `${script}\necho all-alive`);
    expect(r.stdout).toBe('all-alive');
    expect(r.exitCode).toBe(0);
  });

  it('GIVEN a program that exits at once WHEN it is started THEN start_daemon returns quickly and require_alive fails with its log', async () => {
    const s = stateDir();
    const t0 = Date.now();
    // require_alive once the program has ended (daemon_pid no longer finds it), not after a fixed time
    const gone = `gone() { ! daemon_pid quick >/dev/null; }; wait_until 8 gone || { echo 'quick still running after 8 s' >&2; exit 9; }`;
    const r = await bash(s, `start_daemon quick /bin/sh -c 'echo no-config-here; exit 1'; ${gone}; require_alive quick`);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('no-config-here');
    expect(r.stderr).toContain('quick exited');
  });
});

describe('toolchain/lib/daemon.sh stop_daemon', () => {
  it('GIVEN a daemon that ends on TERM WHEN stopped THEN it is gone at once, without SIGKILL, and no longer found', async () => {
    const s = stateDir();
    const t0 = Date.now();
    const r = await bash(s, `start_daemon quiet ${sleepBin} 300; stop_daemon quiet 10; daemon_pid quiet && echo still-found || echo gone`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('gone');
    expect(r.stderr).toMatch(/quiet stopped \(pid \d+\)/);
    expect(r.stderr).not.toContain('SIGKILL');
    expect(Date.now() - t0).toBeLessThan(8_000);
  });

  it('GIVEN a daemon that ignores TERM WHEN stopped with a bound THEN it gets SIGKILL after the bound and is gone', async () => {
    const s = stateDir();
    // a separate bash stops it, as `down` does: the daemon is not its child
    const start = await bash(s, `start_daemon stubborn /bin/sh -c 'trap "" TERM; while :; do ${sleepBin} 1; done'; daemon_pid stubborn`);
    expect(start.exitCode, start.stderr).toBe(0);
    const pid = Number(start.stdout);
    const r = await bash(s, 'stop_daemon stubborn 1; daemon_pid stubborn && echo still-found || echo gone');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('gone');
    expect(r.stderr).toContain(`stubborn (pid ${pid}) did not stop within 1s: SIGKILL`);
    expect(r.stderr).toContain(`stubborn stopped (pid ${pid})`);
    // gone, or a zombie its new parent has not reaped yet
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : ') Z';
    expect(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)).toBe('Z');
  });
});

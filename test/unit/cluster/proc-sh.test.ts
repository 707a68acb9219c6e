/**
 * test/cluster/lib/proc.sh: start_daemon returns only once the daemon runs its own program,
 * so daemon_pid (and require_alive, which every `up` wait calls) never reports a live daemon
 * as dead. A loaded first run lost that race: `up` failed with "etcd exited" 20 ms after
 * starting an etcd that ran for minutes.
 */
import { mkdtempSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { runTool } from '../../../src/tools/run.js';

const procSh = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'cluster', 'lib', 'proc.sh');

/** Runs a bash snippet with proc.sh sourced and S (its state directory) set. */
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

describe('test/cluster/lib/proc.sh start_daemon', () => {
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
    const r = await bash(s, `start_daemon quick /bin/sh -c 'echo no-config-here; exit 1'; sleep 0.5; require_alive quick`);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('no-config-here');
    expect(r.stderr).toContain('quick exited');
  });
});

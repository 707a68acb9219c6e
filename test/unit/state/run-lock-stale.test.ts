/**
 * Stale locks (issue 30): a lock taken on this host by a process that is gone is said to be
 * stale, with the one command that frees it, and `deploy state unlock --force-stale` frees it
 * after checking again. A lock on another host, or one that names no process, is never
 * guessed at.
 */
import { hostname } from 'node:os';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { holderProcess, judgeHolder, thisHost, type HostFacts } from '../../../src/state/lock-holder.js';
import { httpBackend } from '../../../src/config/backend-coordinates.js';
import { takeRunLock } from '../../../src/state/run-lock.js';
import { runCli } from '../../support/cli.js';
import { call, lockInfo, startTestBackend, stateDoc, type TestBackend } from '../../support/state-backend.js';

const here = hostname();
/** A PID that ran and is gone: a process started and waited for. */
let gonePid = 0;
beforeAll(async () => {
  const child = execa(process.execPath, ['-e', '']);
  gonePid = child.pid!;
  await child;
  expect(thisHost().isRunning(gonePid), 'the PID of an ended process').toBe(false);
});

describe('judgeHolder', () => {
  const facts = (running: number[]): HostFacts => ({ hostname: 'vm', isRunning: (pid) => running.includes(pid) });

  it('GIVEN Who user@host:pid of this host THEN gone when that PID does not run, running when it does', () => {
    expect(judgeHolder({ ID: 'a', Who: 'root@vm:16264' }, facts([]))).toEqual({ kind: 'gone', process: { host: 'vm', pid: 16264 } });
    expect(judgeHolder({ ID: 'a', Who: 'root@vm:16264' }, facts([16264])).kind).toBe('running');
  });

  it("GIVEN a CD run name as Who THEN deploy's own Info (pid N on host) is read; another program's Info is not", () => {
    const deployLock = { ID: 'a', Who: 'cd run 7.1', Version: 'deploy', Info: 'state g1-all, pid 812 on vm' };
    expect(judgeHolder(deployLock, facts([])).kind).toBe('gone');
    expect(judgeHolder({ ...deployLock, Version: '1.12.6' }, facts([])).kind, 'not written by deploy').toBe('unknown');
    expect(holderProcess({ ID: 'a', Version: 'deploy', Info: 'http://a -> http://b, pid 9 on vm' })).toEqual({ host: 'vm', pid: 9 });
  });

  it('GIVEN another host, or no process named THEN never stale', () => {
    expect(judgeHolder({ ID: 'a', Who: 'root@other-vm:16264' }, facts([]))).toEqual({ kind: 'other-host', process: { host: 'other-vm', pid: 16264 } });
    expect(judgeHolder({ ID: 'a', Who: 'root@vm' }, facts([])).kind, "tofu's own Who").toBe('unknown');
    expect(judgeHolder({ ID: 'a', Who: 'cd run 7.1' }, facts([])).kind).toBe('unknown');
    expect(judgeHolder({ ID: 'a' }, facts([])).kind).toBe('unknown');
    expect(judgeHolder({ ID: 'a', Who: 'root@vm:0' }, facts([])).kind, 'PID 0 is no process').toBe('unknown');
  });

  it('GIVEN this machine THEN this process runs and an ended one does not', () => {
    expect(judgeHolder({ ID: 'a', Who: `me@${here}:${process.pid}` }).kind).toBe('running');
    expect(judgeHolder({ ID: 'a', Who: `me@${here}:${gonePid}` }).kind).toBe('gone');
  });
});

describe('deploy state unlock --force-stale, and who says "stale"', () => {
  let backend: TestBackend;
  const stale = () => lockInfo({ Who: `root@${here}:${gonePid}`, Operation: 'deploy state migrate' });
  beforeEach(async () => {
    backend = await startTestBackend();
    for (const key of ['g1-all', 'g1-web', 'g1-mail', 'g1-db', 'g1-cd']) expect((await call(`${backend.url}/${key}`, 'POST', stateDoc(1, 'c0ffee00-0000-4000-8000-0000000000b1'))).status).toBe(200);
  });
  afterEach(async () => {
    await backend.stop();
  });

  it('GIVEN stale and live locks WHEN --force-stale THEN only the stale ones go, each by its ID; the others are kept and said', async () => {
    const gone = stale();
    const goneByInfo = lockInfo({ Who: 'cd run 9.2', Version: 'deploy', Info: `state g1-cd, pid ${gonePid} on ${here}` });
    const live = lockInfo({ Who: `root@${here}:${process.pid}` });
    const elsewhere = lockInfo({ Who: 'root@far-away-host:4242' });
    const tofu = lockInfo({ Who: 'root@far-away-host' });
    for (const [key, info] of [['g1-all', gone], ['g1-cd', goneByInfo], ['g1-web', live], ['g1-mail', elsewhere], ['g1-db', tofu]] as const) {
      expect((await call(`${backend.url}/${key}`, 'LOCK', info)).status).toBe(200);
    }
    const listed = await runCli(['state', 'list', '--data', backend.data], {});
    expect(listed.stdout).toContain(`held by root@${here}:${gonePid}, for deploy state migrate`);
    expect(listed.stdout).toContain(`(STALE: pid ${gonePid} no longer runs on this host; deploy state unlock --force-stale frees it)`);
    expect(listed.stdout.match(/STALE/g), 'only the two whose process is gone').toHaveLength(2);
    const r = await runCli(['state', 'unlock', '--force-stale', '--data', backend.data], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`released lock ${gone.ID} on "g1-all"`);
    expect(r.stdout).toContain(`its process is gone (no pid ${gonePid} runs on this host, ${here}): the lock is stale`);
    expect(r.stdout).toContain(`released lock ${goneByInfo.ID} on "g1-cd"`);
    expect(r.stderr).toContain(`kept lock ${live.ID} on "g1-web"`);
    expect(r.stderr).toContain(`pid ${process.pid} runs on this host: wait for that run to end`);
    expect(r.stderr).toContain(`kept lock ${elsewhere.ID} on "g1-mail"`);
    expect(r.stderr).toContain('it was taken on far-away-host, not on this host');
    expect(r.stderr).toContain(`kept lock ${tofu.ID} on "g1-db"`);
    expect(await backend.store.lockOf('g1-all')).toBeUndefined();
    expect(await backend.store.lockOf('g1-cd')).toBeUndefined();
    expect((await backend.store.lockOf('g1-web'))?.ID).toBe(live.ID);
    expect((await backend.store.lockOf('g1-mail'))?.ID).toBe(elsewhere.ID);
    expect((await backend.store.lockOf('g1-db'))?.ID).toBe(tofu.ID);

    const again = await runCli(['state', 'unlock', '--force-stale', '--key', 'g1-all', '--data', backend.data], {});
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('no stale lock on "g1-all"');
  });

  it('GIVEN --key (or an ID) of a lock that is not stale THEN exit 2 naming why, and nothing is released', async () => {
    const live = lockInfo({ Who: `root@${here}:${process.pid}` });
    const elsewhere = lockInfo({ Who: 'root@far-away-host:4242' });
    await call(`${backend.url}/g1-web`, 'LOCK', live);
    await call(`${backend.url}/g1-mail`, 'LOCK', elsewhere);
    const running = await runCli(['state', 'unlock', '--force-stale', '--key', 'g1-web', '--data', backend.data], {});
    expect(running.code).toBe(2);
    expect(running.stderr).toContain(`pid ${process.pid} runs on this host`);
    expect(running.stderr).toContain('not released');
    const other = await runCli(['state', 'unlock', elsewhere.ID, '--force-stale', '--data', backend.data], {});
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('taken on far-away-host');
    expect(other.stderr).toContain(`deploy state unlock ${elsewhere.ID} --key 'g1-mail' --data '${backend.data}'`);
    expect((await backend.store.lockOf('g1-web'))?.ID).toBe(live.ID);
    expect((await backend.store.lockOf('g1-mail'))?.ID).toBe(elsewhere.ID);
    const both = await runCli(['state', 'unlock', '--force-stale', '--held-by', 'x', '--data', backend.data], {});
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--force-stale and --held-by');
  });

  it('GIVEN a stale lock on a state WHEN migrate meets it THEN it says stale (not "wait for that run") and the command that frees it', async () => {
    const gone = stale();
    await call(`${backend.url}/g1-web`, 'LOCK', gone);
    const target = await startTestBackend();
    try {
      const r = await runCli(['state', 'migrate', '--to', target.url, '--data', backend.data, '--key', 'g1-web'], {});
      expect(r.code).toBe(2);
      expect(r.stdout).toContain('g1-web: refused: locked at the source by');
      expect(r.stdout).toContain('the lock is stale; free it: deploy state unlock --force-stale --key \'g1-web\' --data');
      expect(r.stdout).not.toContain('wait for that run');
      const freed = await runCli(['state', 'unlock', '--force-stale', '--key', 'g1-web', '--data', backend.data], {});
      expect(freed.code, freed.stderr).toBe(0);
      const next = await runCli(['state', 'migrate', '--to', target.url, '--data', backend.data, '--key', 'g1-web'], {});
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toContain('g1-web: copied serial 1');
    } finally {
      await target.stop();
    }
  });

  it('GIVEN a stale lock WHEN a run takes the lock THEN it fails at once (no minute of waiting) naming the command', async () => {
    await call(`${backend.url}/g1-all`, 'LOCK', stale());
    const started = Date.now();
    const err = await takeRunLock({ backend: httpBackend('TF_HTTP_ADDRESS', `${backend.url}/g1-all`), key: 'g1-all', operation: 'deploy apply', who: 'me', signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).message).toContain('locked by a run that is gone');
    expect((err as ToolError).hint).toBe("free it (this checks again that its process is gone): deploy state unlock --force-stale --key 'g1-all'");
  });
});

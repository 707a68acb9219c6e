/** A target's session: opened in order, closed as one (also when the run in it throws). */
import { access } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { withTargetSession } from '../../../../src/workflow/target/target-session.js';
import { fakeParts, fakeRun } from '../target-fixture.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('withTargetSession', () => {
  it('GIVEN a run THEN tofu gets the backend, the lock and the run directory, and all is closed after it', async () => {
    const { parts, calls } = fakeParts({});
    const r = await fakeRun('apply');
    cleanups.push(r.cleanup);
    let runDir = '';
    const env = await withTargetSession(parts, r.opts, async (session) => {
      runDir = session.runDir;
      await access(session.runDir);
      return session.tofu.env;
    });
    // the state address as the run's lock gives it (with its ID), over the backend's own
    expect(env).toMatchObject({ TF_HTTP_ADDRESS: 'http://backend.test/g1-all?ID=test', DEPLOY_RUN_DIR: runDir, KUBE_CONFIG_PATH: '/nonexistent/kubeconfig', TF_IN_AUTOMATION: '1' });
    expect(calls.map((c) => c.name)).toEqual(['writeGraph', 'spire.stage', 'backend.open', 'lock.take', 'lock.release', 'backend.close', 'spire.close']);
    expect(calls.find((c) => c.name === 'lock.take')!.args).toEqual(['deploy apply']);
    await expect(access(runDir)).rejects.toThrow();
  });

  it('GIVEN the run in it throws THEN the lock, the backend and the key are closed all the same, and the error is the run\'s', async () => {
    const { parts, calls } = fakeParts({});
    const r = await fakeRun('plan');
    cleanups.push(r.cleanup);
    const failure = new Error('tofu plan failed');
    await expect(withTargetSession(parts, r.opts, async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(calls.map((c) => c.name).slice(-3)).toEqual(['lock.release', 'backend.close', 'spire.close']);
  });

  it('GIVEN the lock cannot be taken THEN what was opened is closed, and nothing runs', async () => {
    const { parts, calls } = fakeParts({});
    const r = await fakeRun('plan');
    cleanups.push(r.cleanup);
    const busy = new Error('the state lock is held by another run');
    const ran: string[] = [];
    await expect(withTargetSession({ ...parts, takeRunLock: () => Promise.reject(busy) }, r.opts, async () => void ran.push('run'))).rejects.toBe(busy);
    expect(ran).toEqual([]);
    expect(calls.map((c) => c.name)).toEqual(['writeGraph', 'spire.stage', 'backend.open', 'backend.close', 'spire.close']);
  });
});

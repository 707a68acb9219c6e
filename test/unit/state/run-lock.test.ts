import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, InterruptedError, ToolError } from '../../../src/errors.js';
import { httpBackend } from '../../../src/config/backend-coordinates.js';
import { runIdentity, takeRunLock } from '../../../src/state/run-lock.js';
import { call, lockInfo, startTestBackend, stateDoc, type TestBackend } from '../../support/state-backend.js';

const lineage = 'c0ffee00-0000-4000-8000-000000000077';

describe('runIdentity: who a run is', () => {
  it('is DEPLOY_RUN_ID when set, else user@host:pid', () => {
    expect(runIdentity({ DEPLOY_RUN_ID: 'cd org/repo run 7.1' })).toBe('cd org/repo run 7.1');
    expect(runIdentity({})).toMatch(new RegExp(`^[^@\\s]+@${hostname().replace(/[.]/g, '\\.')}:${process.pid}$`));
  });

  it('refuses a DEPLOY_RUN_ID with blanks around it, a control character, or 201 characters, naming it', () => {
    for (const bad of [' x', 'x\n', 'a\tb', 'x'.repeat(201)]) {
      const err = (() => {
        try {
          runIdentity({ DEPLOY_RUN_ID: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(err, JSON.stringify(bad)).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('DEPLOY_RUN_ID');
    }
  });
});

describe('takeRunLock: the run holds the state lock, tofu writes under it', () => {
  let backend: TestBackend;
  let address: string;
  beforeEach(async () => {
    backend = await startTestBackend();
    address = `${backend.url}/g1-all`;
  });
  afterEach(async () => {
    await backend.stop();
  });

  const opts = (who: string, extra: Partial<Parameters<typeof takeRunLock>[0]> = {}) => ({
    backend: httpBackend('TF_HTTP_ADDRESS', address),
    key: 'g1-all',
    operation: 'deploy apply',
    who,
    signal: new AbortController().signal,
    ...extra,
  });

  it('locks with Who = the run; writes that carry the ID in the address pass, others are refused; release frees it', async () => {
    const lock = await takeRunLock(opts('cd demo run 5.1'));
    const held = await backend.store.lockOf('g1-all');
    expect(held).toMatchObject({ ID: lock.info.ID, Who: 'cd demo run 5.1', Operation: 'deploy apply' });

    const { tofuAddress } = lock;
    expect(new URL(tofuAddress).searchParams.get('ID')).toBe(lock.info.ID);
    // what tofu does with -lock=false: GET and POST at TF_HTTP_ADDRESS as given
    expect((await call(tofuAddress, 'GET')).status).toBe(404);
    expect((await call(tofuAddress, 'POST', stateDoc(1, lineage))).status).toBe(200);
    expect((await call(address, 'POST', stateDoc(2, lineage))).status, 'a write without the ID').toBe(423);
    expect((await call(tofuAddress, 'GET')).json().serial).toBe(1);

    await lock.release();
    await lock.release();
    expect(await backend.store.lockOf('g1-all')).toBeUndefined();
  });

  it('uses TF_HTTP_LOCK_ADDRESS/UNLOCK_ADDRESS and their methods when set', async () => {
    const lock = await takeRunLock(
      opts('r', { backend: httpBackend('TF_HTTP_ADDRESS', `${backend.url}/elsewhere`, { lockAddress: address, unlockAddress: address, lockMethod: 'LOCK', unlockMethod: 'UNLOCK' }) }),
    );
    expect((await backend.store.lockOf('g1-all'))?.ID).toBe(lock.info.ID);
    expect(await backend.store.lockOf('elsewhere')).toBeUndefined();
    await lock.release();
    expect(await backend.store.lockOf('g1-all')).toBeUndefined();
  });

  it('waits for a lock another run holds, then fails naming it and the unlock command for that run', async () => {
    const other = lockInfo({ Who: 'cd demo run 4.1' });
    expect((await call(address, 'LOCK', other)).status).toBe(200);
    const waits: string[] = [];
    const started = Date.now();
    const err = await takeRunLock(opts('cd demo run 5.1', { timeoutMs: 1_500, onWait: (h) => waits.push(h) })).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).message).toContain('held by cd demo run 4.1');
    expect((err as ToolError).hint).toContain("deploy state unlock --held-by 'cd demo run 4.1'");
    expect(waits).toHaveLength(1);
    expect((await backend.store.lockOf('g1-all'))?.ID).toBe(other.ID);
  });

  it('takes the lock as soon as the other run releases it', async () => {
    const other = lockInfo({ Who: 'earlier' });
    await call(address, 'LOCK', other);
    // released once the run says it waits for it (not after a fixed time, which a loaded
    // machine may reach before the run's first try)
    const waits: string[] = [];
    const onWait = (holder: string) => {
      waits.push(holder);
      void call(address, 'UNLOCK', { ID: other.ID });
    };
    const lock = await takeRunLock(opts('later', { timeoutMs: 10_000, onWait }));
    expect(waits).toHaveLength(1);
    expect((await backend.store.lockOf('g1-all'))?.Who).toBe('later');
    await lock.release();
  });

  it('an abort ends the wait; a backend that does not answer LOCK is a ToolError naming TF_HTTP_LOCK_ADDRESS', async () => {
    await call(address, 'LOCK', lockInfo());
    const controller = new AbortController();
    // the abort comes while the run waits to try again: told it waits, it sleeps next
    const onWait = () => {
      setImmediate(() => controller.abort(new Error('SIGINT')));
    };
    // said as an interrupt that changed nothing (the bare reason was printed as an "unexpected error")
    const stopped = await takeRunLock(opts('x', { signal: controller.signal, onWait })).catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(InterruptedError);
    expect((stopped as Error).message).toBe('interrupted before the state lock of g1-all was taken: nothing of this target was changed');

    const err = await takeRunLock(opts('x', { backend: httpBackend('TF_HTTP_ADDRESS', address, { lockMethod: 'POST' }) })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).hint).toContain('TF_HTTP_LOCK_ADDRESS');
  });
});

/**
 * One node set back by the group's rollback (set-back.ts), without a cluster: the watch is a
 * test's (settable-watch.ts) and the API a fake of its one write, the patch. What an interrupt
 * leaves: the wait stops, the write is never dropped half-way (a patch begun is let finish, so
 * the result says what the Deployment holds), and nothing is written once the signal aborted.
 */
import { describe, expect, it } from 'vitest';
import { durationOf } from '../../../src/config/duration.js';
import { DeadlineError } from '../../../src/deadline.js';
import type { KubeApi } from '../../../src/kube/kube-api.js';
import type { RolloutWatch } from '../../../src/rollout/rollout-watch.js';
import { setBackNode, type OpenWatch, type RunRollout } from '../../../src/rollout/set-back.js';
import { loadFixture } from './load-fixture.js';
import { settableWatch } from './settable-watch.js';
import { until } from '../../support/until.js';

/** web on its new image (Ready), its previous ReplicaSet on the image before. */
const FIXTURE = loadFixture('ready-good-after-good');
const NEW = '127.0.0.1:5000/fediversity/web@sha256:9e2d7c1b5a4f8e3d2c6b0a9f7e1d5c3b8a2f6e0d4c9b7a3f1e5d8c2b6a0f4e92';
const OLD = '127.0.0.1:5000/fediversity/web@sha256:1f3c9a7e2b6d4c8f0a1e5b9d3c7f2a6e0b4d8c2f6a9e3b7d1c5f9a2e6b0d4c81';
const ROLLOUT: RunRollout = { namespace: 'fediversity', node: 'web', image: NEW, previousImage: OLD };
const LIMITS = { timeout: durationOf(60), rollbackTimeout: durationOf(60) };

/** The API's one write: `answer` decides what the patch does; every call is recorded with whether it got the run's signal. */
function fakeApi(answer: () => Promise<unknown>) {
  const patches: { node: string; signal: AbortSignal | undefined }[] = [];
  const api = {
    patchDeployment: async (_ns: string, node: string, _ops: unknown, _fm: string, signal?: AbortSignal) => {
      patches.push({ node, signal });
      return answer();
    },
  } as unknown as KubeApi;
  return { api, patches };
}

/** The Deployment as the API server answers a patch that set it back: a newer generation. */
const patched = () => ({ ...structuredClone(FIXTURE.raw.deployment as object), metadata: { ...(FIXTURE.raw.deployment as any).metadata, generation: 3 } });

/** Opens the fixture's watch at once (or when `gate` resolves); records whether it was stopped. */
function opener(gate: Promise<void> = Promise.resolve()) {
  const state = { stopped: false, opened: false };
  const open: OpenWatch = async () => {
    await gate;
    state.opened = true;
    const { watch } = settableWatch(FIXTURE.snapshot);
    return { ...watch, stop: async () => void (state.stopped = true) } satisfies RolloutWatch;
  };
  return { open, state };
}

describe('setBackNode: one node of the group going back, and an interrupt', () => {
  it('GIVEN the interrupt comes while the patch is on its way THEN the patch is let finish (not given the run\'s signal), the wait stops at once: set back, its pod not Ready yet', async () => {
    const ac = new AbortController();
    const { api, patches } = fakeApi(async () => {
      ac.abort(new Error('SIGINT'));
      await new Promise((r) => setTimeout(r, 20));
      return patched();
    });
    const { open, state } = opener();
    const t = Date.now();
    const r = await setBackNode(api, ROLLOUT, LIMITS, { api, signal: ac.signal }, open);
    expect(Date.now() - t).toBeLessThan(5000);
    expect(patches).toEqual([{ node: 'web', signal: undefined }]);
    expect(r).toMatchObject({ outcome: 'interrupted', holds: 'previous' });
    expect(r.detail).toMatch(/^the Deployment is set back to .*sha256:1f3c9a7e2b6d.*, its pod was not ready yet\./);
    expect(state.stopped).toBe(true);
  });

  it('GIVEN the interrupt comes while its watch opens THEN it returns at once, nothing written: it runs the image of this run; the watch is stopped once it opens', async () => {
    const ac = new AbortController();
    let letOpen!: () => void;
    const { open, state } = opener(new Promise<void>((r) => (letOpen = r)));
    const { api, patches } = fakeApi(async () => patched());
    const p = setBackNode(api, ROLLOUT, LIMITS, { api, signal: ac.signal }, open);
    ac.abort(new Error('SIGINT'));
    const r = await p;
    expect(r).toEqual({ outcome: 'interrupted', holds: 'this-run', detail: 'interrupted before it was set back: it runs the image of this run' });
    expect(state.opened).toBe(false);
    letOpen();
    // the watch opens after the return: it is stopped then (a wait for it, not a fixed time)
    await until('the watch that opened after the interrupt stopped', () => state.stopped, { timeoutMs: 5000 });
    expect(patches).toEqual([]);
  });

  it('GIVEN the signal aborted before THEN no watch, no write', async () => {
    const ac = new AbortController();
    ac.abort(new Error('SIGINT'));
    const { open, state } = opener();
    const { api, patches } = fakeApi(async () => patched());
    const r = await setBackNode(api, ROLLOUT, LIMITS, { api, signal: ac.signal }, open);
    expect(r).toMatchObject({ outcome: 'interrupted', holds: 'this-run' });
    expect([state.opened, patches.length]).toEqual([false, 0]);
  });

  it('GIVEN the API server refuses the patch THEN nothing was written (this run\'s image); no answer THEN unknown', async () => {
    const signal = new AbortController().signal;
    const refused = fakeApi(async () => Promise.reject(Object.assign(new Error('HTTP 409'), { code: 409, body: '{"kind":"Status","message":"the object has been modified"}' })));
    expect(await setBackNode(refused.api, ROLLOUT, LIMITS, { api: refused.api, signal }, opener().open)).toMatchObject({ outcome: 'rollback-failed', holds: 'this-run' });
    const silent = fakeApi(async () => Promise.reject(new DeadlineError('patch Deployment fediversity/web', 15_000)));
    const r = await setBackNode(silent.api, ROLLOUT, LIMITS, { api: silent.api, signal }, opener().open);
    expect(r).toMatchObject({ outcome: 'rollback-failed', holds: 'unknown' });
    expect(r.detail).toMatch(/no answer within 15s/);
  });

  it('GIVEN its Deployment changed since its rollout THEN it is not touched, and the detail says what it runs', async () => {
    const { api, patches } = fakeApi(async () => patched());
    const r = await setBackNode(api, { ...ROLLOUT, image: 'reg/web@sha256:someone-else' }, LIMITS, { api, signal: new AbortController().signal }, opener().open);
    expect(r).toMatchObject({ outcome: 'changed', holds: 'other' });
    expect(r.detail).toMatch(/^its Deployment changed since its rollout \(it runs sha256:9e2d7c1b5a4f, not /);
    expect(patches).toEqual([]);
  });
});

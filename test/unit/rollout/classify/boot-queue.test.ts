import { describe, expect, it } from 'vitest';
import { createBootQueueReader, isShuttingDown } from '../../../../src/rollout/classify/boot-queue.js';
import type { KubeApi } from '../../../../src/kube/kube-api.js';
import { parseJobLines } from '../../../../src/rollout/classify/systemd-jobs.js';

// what `systemctl list-jobs --no-legend --no-pager` printed in the hang image's pod on the
// local cluster: while booting, and once the kubelet had begun to stop the container
const BOOTING = ['101 hang.service start running', '  2 multi-user.target start waiting', '  1 graphical.target start waiting'];
const STOPPING = ['140 umount.target start waiting', '139 final.target start waiting', '137 halt.target start waiting', '101 hang.service stop running'];

/** An API whose exec answers from `answers` in turn (an Error is thrown), counting the calls. */
function fakeApi(answers: (string[] | Error)[]) {
  const calls: string[] = [];
  const api = {
    async execLines(_ns: string, pod: string) {
      calls.push(pod);
      const a = answers.shift() ?? new Error('no more answers');
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as KubeApi;
  return { api, calls };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const DEADLINE = 100_000;

describe('the boot queue of a boot the deadline cut short', () => {
  it('knows a queue that stops the system', () => {
    expect(isShuttingDown(parseJobLines(STOPPING))).toBe(true);
    expect(isShuttingDown(parseJobLines(BOOTING))).toBe(false);
  });

  it('GIVEN a booting pod WHEN the deadline is far THEN it reads nothing; near it, every 4 s at most', async () => {
    let t = 50_000;
    const { api, calls } = fakeApi([BOOTING, BOOTING, BOOTING]);
    const r = createBootQueueReader(api, 'ns', DEADLINE, () => t);
    r.consider('p1', true, t);
    expect(calls).toEqual([]);
    t = 89_000;
    r.consider('p1', false, t); // not booting (e.g. pulling): nothing to read
    r.consider('p1', true, t);
    await settle();
    r.consider('p1', true, (t = 91_000));
    await settle();
    expect(calls).toEqual(['p1']);
    r.consider('p1', true, (t = 93_500));
    await settle();
    expect(calls).toEqual(['p1', 'p1']);
  });

  it('at the verdict: the fresh queue when systemd still boots', async () => {
    const { api } = fakeApi([BOOTING, BOOTING]);
    const r = createBootQueueReader(api, 'ns', DEADLINE, () => 95_000);
    r.consider('p1', true, 95_000);
    await settle();
    const q = await r.atVerdict('p1', 100_000, new AbortController().signal);
    expect(q).toMatchObject({ ageMs: 0 });
    expect(q!.jobs[0]).toEqual({ unit: 'hang.service', type: 'start', state: 'running' });
  });

  it('at the verdict: the last sample, and how old it is, when the kubelet is already stopping the container (or the read fails)', async () => {
    for (const atVerdict of [STOPPING, new Error('container not running')]) {
      const { api } = fakeApi([BOOTING, atVerdict]);
      const r = createBootQueueReader(api, 'ns', DEADLINE, () => 95_000);
      r.consider('p1', true, 95_000);
      await settle();
      const q = await r.atVerdict('p1', 99_000, new AbortController().signal);
      expect(q).toMatchObject({ ageMs: 4_000 });
      expect(q!.jobs.map((j) => j.unit)).toContain('hang.service');
    }
  });

  it('at the verdict without a sample: the stopping queue rather than nothing; nothing when the read fails', async () => {
    const stopping = createBootQueueReader(fakeApi([STOPPING]).api, 'ns', DEADLINE, () => 0);
    expect((await stopping.atVerdict('p1', 99_000, new AbortController().signal))?.jobs.map((j) => j.unit)).toContain('halt.target');
    const failing = createBootQueueReader(fakeApi([new Error('gone')]).api, 'ns', DEADLINE, () => 0);
    expect(await failing.atVerdict('p1', 99_000, new AbortController().signal)).toBeUndefined();
  });

  it("a sample of another pod (a restarted one) does not speak for this one", async () => {
    const { api } = fakeApi([BOOTING, new Error('gone')]);
    const r = createBootQueueReader(api, 'ns', DEADLINE, () => 95_000);
    r.consider('old-pod', true, 95_000);
    await settle();
    expect(await r.atVerdict('new-pod', 99_000, new AbortController().signal)).toBeUndefined();
  });
});

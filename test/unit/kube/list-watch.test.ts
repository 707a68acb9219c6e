/**
 * The list+watch loop against a scripted watch client: each scripted connection replays
 * watch events (as the API server sends them) and then ends the way a real one can
 * (server timeout, 410 Gone, network error). Asserts what the loop asks for next.
 */
import { describe, expect, it } from 'vitest';
import { startListWatch, type WatchClient } from '../../../src/kube/list-watch.js';

type Step = { events: [string, any][]; end: any };

function scriptedWatch(steps: Step[]) {
  const calls: Record<string, unknown>[] = [];
  const client: WatchClient = {
    async watch(_path, query, cb, done) {
      calls.push(query);
      const step = steps.shift();
      const ctrl = new AbortController();
      if (!step) {
        // no more script: behave like an open, quiet watch until aborted
        ctrl.signal.addEventListener('abort', () => done(new Error('aborted')));
        return ctrl;
      }
      setTimeout(() => {
        for (const [type, obj] of step.events) cb(type, obj);
        done(step.end);
      }, 5);
      return ctrl;
    },
  };
  return { client, calls };
}

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv } });
const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('startListWatch', () => {
  it('watches from the list resourceVersion, reconnects from the last one seen, relists on 410', async () => {
    let lists = 0;
    const { client, calls } = scriptedWatch([
      { events: [['ADDED', pod('b', '11')], ['MODIFIED', pod('a', '12')]], end: null }, // server closed (timeoutSeconds)
      { events: [['BOOKMARK', { metadata: { resourceVersion: '15' } }], ['DELETED', pod('b', '16')]], end: null },
      { events: [['ERROR', { kind: 'Status', code: 410, reason: 'Expired' }]], end: null }, // too old: list again
    ]);
    let changes = 0;
    const h = await startListWatch({
      name: 'pods',
      path: '/api/v1/namespaces/ns/pods',
      labelSelector: 'app.kubernetes.io/name=web',
      watch: client,
      list: async () => {
        lists += 1;
        return lists === 1 ? { items: [pod('a', '9')], resourceVersion: '10' } : { items: [pod('c', '30')], resourceVersion: '31' };
      },
      onChange: () => (changes += 1),
    });
    await until(() => calls.length >= 4);
    // the third watch ends with 410 Gone: the fourth starts from a fresh list's resourceVersion
    expect(calls.slice(0, 4).map((c) => c.resourceVersion)).toEqual(['10', '12', '16', '31']);
    expect(calls[0]).toMatchObject({ labelSelector: 'app.kubernetes.io/name=web', allowWatchBookmarks: true });
    expect(lists).toBe(2);
    expect(h.objects()).toEqual([pod('c', '30')]);
    expect(changes).toBeGreaterThanOrEqual(5);
    await h.stop();
  });

  it('backs off after an error and keeps going until stopped', async () => {
    const { client, calls } = scriptedWatch([
      { events: [], end: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) },
      { events: [['ADDED', pod('b', '21')]], end: null },
    ]);
    const h = await startListWatch({ name: 'pods', path: '/p', watch: client, list: async () => ({ items: [], resourceVersion: '20' }), onChange: () => {} });
    await until(() => h.objects().length === 1);
    expect(h.failing()).toBeUndefined();
    expect(calls.slice(0, 2).map((c) => c.resourceVersion)).toEqual(['20', '20']);
    const t = Date.now();
    await h.stop();
    expect(Date.now() - t).toBeLessThan(2500);
  });

  it('says since when it keeps failing', async () => {
    const refused = () => ({ events: [] as [string, any][], end: Object.assign(new Error('connect ECONNREFUSED 10.255.254.1:6443'), { code: 'ECONNREFUSED' }) });
    const { client, calls } = scriptedWatch([refused(), refused(), refused()]);
    const t0 = Date.now();
    const h = await startListWatch({ name: 'pods', path: '/p', watch: client, list: async () => ({ items: [], resourceVersion: '1' }), onChange: () => {} });
    await until(() => calls.length >= 2);
    const f = h.failing();
    expect(f?.message).toBe('connect ECONNREFUSED 10.255.254.1:6443');
    expect(f!.since).toBeGreaterThanOrEqual(t0);
    await h.stop();
  });

  it('lists again when the server answers the watch with an error status (a recreated API server)', async () => {
    let lists = 0;
    const tooLarge = Object.assign(new Error('Gateway Timeout'), { statusCode: 504 });
    const { client, calls } = scriptedWatch([{ events: [], end: tooLarge }]);
    const h = await startListWatch({ name: 'pods', path: '/p', watch: client, list: async () => ({ items: [], resourceVersion: String(900 - 800 * lists++) }), onChange: () => {} });
    await until(() => calls.length >= 2);
    expect(lists).toBe(2);
    expect(calls.map((c) => c.resourceVersion)).toEqual(['900', '100']);
    await h.stop();
  });

  it('lets the first list fail to the caller', async () => {
    const { client } = scriptedWatch([]);
    await expect(
      startListWatch({ name: 'pods', path: '/p', watch: client, list: async () => Promise.reject(new Error('Forbidden')), onChange: () => {} }),
    ).rejects.toThrow('Forbidden');
  });
});

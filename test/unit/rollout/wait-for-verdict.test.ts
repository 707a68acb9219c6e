import { describe, expect, it } from 'vitest';
import { waitForVerdict } from '../../../src/rollout/wait-for-verdict.js';
import { loadFixture } from './load-fixture.js';
import { settableWatch } from './settable-watch.js';

describe('waitForVerdict', () => {
  it('fails fast on the change that makes the rollout terminal', async () => {
    const { watch, set } = settableWatch(loadFixture('slow-booting').snapshot);
    const seen: string[] = [];
    const p = waitForVerdict(watch, { deadline: Date.now() + 60_000, signal: new AbortController().signal, onVerdict: (v) => seen.push(v.kind) });
    setTimeout(() => set(loadFixture('terminal-systemd-degraded').snapshot), 50);
    const t = Date.now();
    const r = await p;
    expect(Date.now() - t).toBeLessThan(1000);
    expect(r.kind === 'verdict' && r.verdict).toMatchObject({ kind: 'failed', reason: 'systemd-degraded' });
    expect(seen[0]).toBe('waiting');
  });

  it('at the deadline says what it was still waiting for', async () => {
    const { watch } = settableWatch(loadFixture('slow-pulling').snapshot);
    const r = await waitForVerdict(watch, { deadline: Date.now() + 700, signal: new AbortController().signal });
    expect(r.kind === 'verdict' && r.verdict).toMatchObject({ kind: 'failed', reason: 'timeout' });
    expect(r.kind === 'verdict' && r.verdict.kind === 'failed' && r.verdict.message).toMatch(/^not ready within 1s; still pulling: Pulling image/);
  });

  it('says so when the API server stopped answering (the last state may be stale)', async () => {
    const { watch, setStale } = settableWatch(loadFixture('slow-booting').snapshot);
    setStale('the API server has not answered the watch since 2026-11-30T04:17:21.000Z (connect ECONNREFUSED)');
    const r = await waitForVerdict(watch, { deadline: Date.now() + 300, signal: new AbortController().signal });
    expect(r.kind === 'verdict' && r.verdict.kind === 'failed' && r.verdict.message).toMatch(
      /^not ready within 0s; the API server has not answered the watch since .* \(connect ECONNREFUSED\); last seen booting: /,
    );
  });

  it('stops on the abort signal with the last verdict', async () => {
    const { watch } = settableWatch(loadFixture('slow-booting').snapshot);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('SIGINT')), 100);
    const r = await waitForVerdict(watch, { deadline: Date.now() + 60_000, signal: ac.signal });
    expect(r.kind).toBe('interrupted');
    expect(r.kind === 'interrupted' && r.last).toMatchObject({ kind: 'waiting', phase: 'booting' });
  });
});

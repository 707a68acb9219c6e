import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, createStepProgress, parseStepProgressLine, stepOutcomeLine } from '../../../src/rollout/progress.js';

function sink() {
  const s = new PassThrough();
  let text = '';
  s.on('data', (c) => (text += c));
  return { s, text: () => text };
}
const booting = { kind: 'waiting', phase: 'booting', detail: 'systemd is booting (systemd: starting)', systemdState: 'starting' } as const;

describe('progress', () => {
  it('on a TTY rewrites one line per node: phase, systemd state, elapsed/deadline', () => {
    const out = sink();
    const p = createProgress(out.s, 'web', { tty: true });
    p.show('rollout', booting, 1200, 300_000);
    p.show('rollout', booting, 2400, 300_000);
    p.end();
    expect(out.text()).toBe(
      '\r\x1b[2Kweb: booting: systemd is booting (systemd: starting) 1s/300s' +
        '\r\x1b[2Kweb: booting: systemd is booting (systemd: starting) 2s/300s\n',
    );
  });

  it('shows the systemd state when the detail does not', () => {
    const out = sink();
    createProgress(out.s, 'web', { tty: false }).show('rollout', { kind: 'waiting', phase: 'available', detail: 'pod web-1 is ready', systemdState: 'running' }, 0, 60_000);
    expect(out.text()).toBe('web: available [systemd: running]: pod web-1 is ready 0s/60s\n');
  });

  it('otherwise prints a plain line when the phase changes, and "still" every 30 s', () => {
    const out = sink();
    const p = createProgress(out.s, 'web', { tty: false });
    p.show('rollout', { kind: 'waiting', phase: 'pulling', detail: 'Pulling image "r/x"' }, 0, 300_000);
    p.show('rollout', { kind: 'waiting', phase: 'pulling', detail: 'Pulling image "r/x"' }, 500, 300_000);
    p.show('rollout', booting, 2000, 300_000);
    p.show('rollout', booting, 33_000, 300_000);
    p.show('rollback', { kind: 'ready', pod: 'web-1', image: null }, 4000, 300_000);
    p.end();
    expect(out.text().split('\n')).toEqual([
      'web: pulling: Pulling image "r/x" 0s/300s',
      'web: booting: systemd is booting (systemd: starting) 2s/300s',
      'web: still booting: systemd is booting (systemd: starting) 33s/300s',
      'web: rolling back: ready (web-1) 4s/300s',
      '',
    ]);
  });

  it('under deploy apply: machine lines on each change and every 10 s, that the apply parses back; a line for people is none', () => {
    const out = sink();
    const p = createStepProgress(out.s, 'web');
    p.show('rollout', booting, 1000, 300_000);
    p.show('rollout', booting, 2000, 300_000);
    p.show('rollout', booting, 12_000, 300_000);
    p.show('rollout', { kind: 'failed', reason: 'systemd-degraded', message: 'degraded\nmore', failedUnits: ['broken.service'], systemdState: 'degraded' }, 13_000, 300_000);
    out.s.write(stepOutcomeLine({ node: 'web', outcome: 'rolled-back', reason: 'systemd-degraded', failedUnits: ['broken.service'], message: 'degraded\nmore', durations: { totalMs: 20_000 } as never }));
    const lines = out.text().trimEnd().split('\n');
    expect(lines.map((l) => parseStepProgressLine(l))).toEqual([
      { deployRolloutStep: 1, event: 'progress', node: 'web', stage: 'rollout', verdict: 'waiting', phase: 'booting', systemd: 'starting', detail: 'systemd is booting (systemd: starting)', elapsedMs: 1000, limitMs: 300_000 },
      { deployRolloutStep: 1, event: 'progress', node: 'web', stage: 'rollout', verdict: 'waiting', phase: 'booting', systemd: 'starting', detail: 'systemd is booting (systemd: starting)', elapsedMs: 12_000, limitMs: 300_000 },
      { deployRolloutStep: 1, event: 'progress', node: 'web', stage: 'rollout', verdict: 'failed', phase: 'systemd-degraded', systemd: 'degraded', detail: 'degraded', elapsedMs: 13_000, limitMs: 300_000 },
      { deployRolloutStep: 1, event: 'outcome', node: 'web', outcome: 'rolled-back', reason: 'systemd-degraded', failedUnits: ['broken.service'], message: 'degraded', totalMs: 20_000 },
    ]);
    for (const people of ['web: booting 1s/300s', '{"deployRolloutStep":2}', '{"deployRolloutStep":1,"event":"progress"}', '{not json deployRolloutStep']) expect(parseStepProgressLine(people), people).toBeUndefined();
  });

  it('the soak: a line every 5 s with the time left, that a view counts down; for people, "soaking"', () => {
    const out = sink();
    const p = createStepProgress(out.s, 'web');
    const ready = { kind: 'ready', pod: 'web-1', image: null } as const;
    for (const ms of [0, 2000, 5000, 12_500]) p.show('soak', ready, ms, 40_000);
    const lines = out.text().trimEnd().split('\n').map((l) => parseStepProgressLine(l));
    expect(lines.map((l) => l?.event === 'progress' && [l.stage, l.elapsedMs, l.remainingMs, l.detail])).toEqual([
      ['soak', 0, 40_000, 'pod web-1 is ready; soaking: 40s left of 40s'],
      ['soak', 5000, 35_000, 'pod web-1 is ready; soaking: 35s left of 40s'],
      ['soak', 12_500, 27_500, 'pod web-1 is ready; soaking: 28s left of 40s'],
    ]);
    const people = sink();
    createProgress(people.s, 'web', { tty: false }).show('soak', ready, 12_000, 40_000);
    expect(people.text()).toBe('web: soaking: ready (web-1) 12s/40s\n');
  });
});

import { describe, expect, it } from 'vitest';
import { LAST_ROLLOUT_ANNOTATION, lastRolloutOf, readLastRollout } from '../../../src/rollout/last-rollout.js';
import type { RolloutReport } from '../../../src/rollout/report.js';

const report = (message: string): RolloutReport => ({
  version: 1,
  node: 'web',
  namespace: 'ns',
  outcome: 'rolled-back',
  reason: 'systemd-degraded',
  message,
  failedUnits: ['broken.service'],
  events: [],
  lastState: null,
  logTail: ['a line'],
  systemdJobs: [],
  image: 'r/web@sha256:b',
  previousImage: 'r/web@sha256:a',
  timeoutSeconds: 120,
  startedAt: '2026-12-01T12:00:00.000Z',
  durations: { waitMs: 1, evidenceReadMs: null, rollbackMs: null, evidenceToVerdictMs: null, evidenceToRollbackDoneMs: null, totalMs: 4500 },
});

describe('the last rollout on the Deployment', () => {
  it('GIVEN a report THEN its outcome, reason, images and end time go on the annotation and read back', () => {
    const last = lastRolloutOf(report('degraded'));
    expect(last).toEqual({ outcome: 'rolled-back', reason: 'systemd-degraded', message: 'degraded', at: '2026-12-01T12:00:04.500Z', image: 'r/web@sha256:b', previousImage: 'r/web@sha256:a', failedUnits: ['broken.service'] });
    expect(readLastRollout({ [LAST_ROLLOUT_ANNOTATION]: JSON.stringify(last), other: 'x' })).toEqual(last);
  });
  it('GIVEN a long message THEN it is cut to 600 characters', () => {
    expect(lastRolloutOf(report('x'.repeat(5000))).message).toHaveLength(600);
  });
  it('GIVEN no annotation, or one that is not ours THEN undefined', () => {
    expect(readLastRollout(undefined)).toBeUndefined();
    expect(readLastRollout({ [LAST_ROLLOUT_ANNOTATION]: '{oops' })).toBeUndefined();
    expect(readLastRollout({ [LAST_ROLLOUT_ANNOTATION]: '{"outcome":"maybe"}' })).toBeUndefined();
  });
});

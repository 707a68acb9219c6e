import { describe, expect, it } from 'vitest';
import type { LastRollout } from '../../../../src/rollout/last-rollout.js';
import type { ClusterNode } from '../../../../src/workflow/status/status-cluster.js';
import { judgeNodes } from '../../../../src/workflow/status/status-judge.js';
import type { StateNode } from '../../../../src/workflow/status/nodes-in-state.js';
import { digest, imageRef } from '../state-fixture.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const held = (node: string, c: string, extra: Partial<StateNode> = {}): StateNode => ({ node, image: imageRef(node, c), tagRef: `r/${node}:t`, rolloutFailed: false, machineId: 'm', claimUid: 'u', ...extra });
const runs = (node: string, c: string, extra: Partial<ClusterNode> = {}, pod: Partial<NonNullable<ClusterNode['pod']>> = {}): ClusterNode => ({
  node,
  image: imageRef(node, c),
  group: 'g1',
  lastRollout: undefined,
  pod: { name: `${node}-abc-1`, created: '2026-12-01T11:58:00Z', ready: true, restarts: 0, runningImage: `r/${node}@${digest(c)}`, container: 'running', ...pod },
  ...extra,
});
const report = (outcome: LastRollout['outcome'], tried: string, previous: string | null): LastRollout => ({ outcome, reason: outcome === 'ready' ? 'ready' : 'systemd-degraded', message: 'systemd is degraded (failed units: broken.service)', at: '2026-12-01T11:59:00Z', image: tried, previousImage: previous, failedUnits: [] });
const judge = (s: StateNode[], c: ClusterNode[]) => judgeNodes('g1', s, new Map(c.map((x) => [x.node, x])), NOW);

describe('judgeNodes', () => {
  it('GIVEN the pod ready on the state image THEN ok, with its age, restarts and running digest', () => {
    const [n] = judge([held('web', 'a')], [runs('web', 'a')]);
    expect(n).toMatchObject({ node: 'web', mark: 'ok', words: '', cluster: { ready: true, restarts: 0, podAgeSeconds: 120, runningImage: `r/web@${digest('a')}` } });
  });
  it('GIVEN a rollback (the report tried the state image) THEN rolled-back, naming both digests and the reason', () => {
    const [n] = judge([held('web', 'b', { rolloutFailed: true })], [runs('web', 'a', { lastRollout: report('rolled-back', imageRef('web', 'b'), imageRef('web', 'a')) })]);
    expect(n!.mark).toBe('rolled-back');
    expect(n!.words).toContain('runs the previous image sha256:aaaaaaaaaaaa, the state holds sha256:bbbbbbbbbbbb');
    expect(n!.words).toContain('broken.service');
  });
  it('GIVEN no report on the Deployment but a tainted step and another image THEN rolled-back; without the taint THEN drift', () => {
    expect(judge([held('web', 'b', { rolloutFailed: true })], [runs('web', 'a')])[0]!.mark).toBe('rolled-back');
    expect(judge([held('web', 'b')], [runs('web', 'a')])[0]!.mark).toBe('drift');
  });
  it('GIVEN a report of another image THEN the other image is drift, not a rollback', () => {
    const n = judge([held('web', 'c')], [runs('web', 'a', { lastRollout: report('rolled-back', imageRef('web', 'b'), imageRef('web', 'a')) })])[0]!;
    expect(n.mark).toBe('drift');
  });
  it('GIVEN no Deployment THEN missing; GIVEN a Deployment of the group the state does not hold THEN not-in-state; one of another group is not ours', () => {
    const out = judge([held('web', 'a')], [runs('old', 'a'), runs('other', 'a', { group: 'g2' }), runs('plain', 'a', { group: null })]);
    expect(out.map((n) => [n.node, n.mark])).toEqual([
      ['old', 'not-in-state'],
      ['web', 'missing'],
    ]);
    expect(out[1]!.cluster).toBeNull();
  });
  it('GIVEN the applied image but no pod, a pod not ready, or a pod on another digest THEN not-ready, saying which', () => {
    const none = judge([held('web', 'a')], [runs('web', 'a', { pod: undefined })])[0]!;
    expect(none).toMatchObject({ mark: 'not-ready', words: 'its Deployment has no pod' });
    const down = judge([held('web', 'a')], [runs('web', 'a', { lastRollout: report('failed-no-previous', imageRef('web', 'a'), null) }, { ready: false, restarts: 3, container: 'waiting: CrashLoopBackOff' })])[0]!;
    expect(down.mark).toBe('not-ready');
    expect(down.words).toContain('(waiting: CrashLoopBackOff, 3 restarts); its last rollout (2026-12-01T11:59:00Z) ended failed-no-previous');
    const old = judge([held('web', 'b')], [runs('web', 'b', {}, { runningImage: `r/web@${digest('a')}` })])[0]!;
    expect(old.words).toContain('runs sha256:aaaaaaaaaaaa, not yet sha256:bbbbbbbbbbbb');
  });
});

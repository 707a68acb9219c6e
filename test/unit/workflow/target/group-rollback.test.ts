/**
 * --on-failure group without a cluster: the order the nodes go back in (reverse waves, a wave
 * waited for before the one before it), which nodes go back (only those whose rollout succeeded
 * in this run), and the exit codes; the cluster's writes are a fake setBack.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../../src/errors.js';
import type { RolloutOutcome, RolloutReport } from '../../../../src/rollout/report.js';
import type { RunRollout, SetBackResult } from '../../../../src/rollout/set-back.js';
import { groupSetBackLine, rollBackGroup, wantsGroupRollback } from '../../../../src/workflow/target/group-rollback.js';

const NS = 'fediversity';
const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'].map((name) => ({ name }));

function rep(node: string, outcome: RolloutOutcome, previousImage: string | null = `reg/${node}@sha256:old`): RolloutReport {
  return {
    version: 1, node, namespace: NS, outcome, reason: outcome, message: outcome, failedUnits: [], events: [], lastState: null, logTail: [], systemdJobs: [],
    image: `reg/${node}@sha256:new`, previousImage, timeoutSeconds: 60, startedAt: '2026-12-03T00:00:00Z', durations: {} as RolloutReport['durations'],
  };
}

/** A fake setBack: records when each node starts and ends; answers `answers[node]` (default: rolled back). */
function fakeSetBack(answers: Record<string, SetBackResult['outcome']> = {}, onStart: (node: string) => void = () => {}) {
  const log: string[] = [];
  const setBack = async (r: RunRollout): Promise<SetBackResult> => {
    log.push(`start ${r.node} ${r.image} -> ${r.previousImage}`);
    onStart(r.node);
    await new Promise((res) => setTimeout(res, r.node === 'n3' ? 20 : 5));
    log.push(`end ${r.node}`);
    return { outcome: answers[r.node] ?? 'rolled-back', detail: `pod ${r.node}-old is ready` };
  };
  return { log, setBack };
}

const run = (setBack: (r: RunRollout) => Promise<SetBackResult>, signal = new AbortController().signal, said: string[] = []) => ({ setBack, signal, progress: (l: string) => said.push(l) });

describe('rollBackGroup', () => {
  it('GIVEN waves of 2 and the rollout of wave 3 failed THEN wave 2 goes back first, both its nodes waited for, then wave 1; exit 4', async () => {
    // waves: [n1 n2] [n3 n4] [n5]; n5 rolled back by its own step
    const rollouts = [rep('n1', 'ready'), rep('n2', 'ready'), rep('n3', 'ready'), rep('n4', 'ready'), rep('n5', 'rolled-back')];
    const { log, setBack } = fakeSetBack();
    const said: string[] = [];
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, rollouts, run(setBack, undefined, said));
    expect(log).toEqual([
      'start n3 reg/n3@sha256:new -> reg/n3@sha256:old',
      'start n4 reg/n4@sha256:new -> reg/n4@sha256:old',
      'end n4',
      'end n3',
      'start n1 reg/n1@sha256:new -> reg/n1@sha256:old',
      'start n2 reg/n2@sha256:new -> reg/n2@sha256:old',
      'end n1',
      'end n2',
    ]);
    expect(said).toEqual(['--on-failure group: setting back wave 2 of 3: n3, n4', '--on-failure group: setting back wave 1 of 3: n1, n2']);
    expect(r.nodes.map((n) => [n.node, n.wave, n.outcome, n.runs])).toEqual([
      ['n3', 2, 'set-back', 'reg/n3@sha256:old'],
      ['n4', 2, 'set-back', 'reg/n4@sha256:old'],
      ['n1', 1, 'set-back', 'reg/n1@sha256:old'],
      ['n2', 1, 'set-back', 'reg/n2@sha256:old'],
    ]);
    expect(r.exitCode).toBe(ExitCode.rolledBack);
    expect(groupSetBackLine(r.nodes[0]!)).toBe('fediversity/n3: group rollback (wave 2): set-back (runs sha256:old): set back to sha256:old: pod n3-old is ready');
  });

  it('GIVEN nodes held back (no report) THEN they are not touched: only the nodes whose rollout succeeded go back', async () => {
    const { log, setBack } = fakeSetBack();
    const r = await rollBackGroup({ nodes, waveSize: 1, namespace: NS }, [rep('n1', 'ready'), rep('n2', 'rolled-back')], run(setBack));
    expect(log.filter((l) => l.startsWith('start')).map((l) => l.split(' ')[1])).toEqual(['n1']);
    expect(r.exitCode).toBe(ExitCode.rolledBack);
  });

  it('GIVEN one node whose rollback does not become Ready THEN exit 6, and the others still go back', async () => {
    const { log, setBack } = fakeSetBack({ n3: 'rollback-failed' });
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, [rep('n1', 'ready'), rep('n3', 'ready'), rep('n5', 'rolled-back')], run(setBack));
    expect(log.filter((l) => l.startsWith('end'))).toEqual(['end n3', 'end n1']);
    expect(r.nodes.map((n) => n.outcome)).toEqual(['failed', 'set-back']);
    expect(r.exitCode).toBe(ExitCode.rollbackFailed);
  });

  it('GIVEN a node someone changed since its rollout THEN it is left, and the exit is 6 (the group is not one configuration)', async () => {
    const { setBack } = fakeSetBack({ n1: 'changed' });
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, [rep('n1', 'ready'), rep('n5', 'rolled-back')], run(setBack));
    expect(r.nodes).toEqual([expect.objectContaining({ node: 'n1', outcome: 'changed', runs: null })]);
    expect(r.exitCode).toBe(ExitCode.rollbackFailed);
  });

  it('GIVEN a node new in this run THEN it is not touched (nothing to go back to): exit 5', async () => {
    const { log, setBack } = fakeSetBack();
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, [rep('n1', 'ready', null), rep('n5', 'rolled-back')], run(setBack));
    expect(log).toEqual([]);
    expect(r.nodes.map((n) => n.outcome)).toEqual(['no-previous']);
    expect(r.exitCode).toBe(ExitCode.failedNoPrevious);
  });

  it('GIVEN an interrupt during a wave THEN that wave ends, the waves before it are not reached, and the exit is 130', async () => {
    const ac = new AbortController();
    const { log, setBack } = fakeSetBack({}, (node) => node === 'n3' && ac.abort(new Error('SIGINT')));
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, [rep('n1', 'ready'), rep('n3', 'ready'), rep('n5', 'rolled-back')], run(setBack, ac.signal));
    expect(log.filter((l) => l.startsWith('start')).map((l) => l.split(' ')[1])).toEqual(['n3']);
    expect(r.nodes.map((n) => [n.node, n.outcome, n.runs])).toEqual([
      ['n3', 'set-back', 'reg/n3@sha256:old'],
      ['n1', 'not-reached', 'reg/n1@sha256:new'],
    ]);
    expect(r.exitCode).toBe(ExitCode.interrupted);
  });
});

describe('wantsGroupRollback', () => {
  it('only with --on-failure group, and only after a failed rollout (an interrupt is no failure)', () => {
    const failed = [rep('n1', 'ready'), rep('n2', 'rolled-back')];
    expect(wantsGroupRollback({ onFailure: 'group' }, failed)).toBe(true);
    expect(wantsGroupRollback({}, failed)).toBe(false);
    expect(wantsGroupRollback({ onFailure: 'group' }, [rep('n1', 'ready'), rep('n2', 'interrupted')])).toBe(false);
    expect(wantsGroupRollback({ onFailure: 'group' }, [rep('n1', 'ready'), rep('n2', 'failed-no-previous')])).toBe(true);
  });
});

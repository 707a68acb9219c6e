/**
 * --on-failure group without a cluster: the order the nodes go back in (reverse waves, a wave
 * waited for before the one before it), which nodes go back (only those whose rollout succeeded
 * in this run), and the exit codes; the cluster's writes are a fake setBack.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../../src/errors.js';
import type { RolloutOutcome, RolloutReport } from '../../../../src/rollout/report.js';
import type { Verdict } from '../../../../src/rollout/classify/verdict.js';
import type { RunRollout, SetBackResult } from '../../../../src/rollout/set-back.js';
import { groupSetBackLine, rollBackGroup, wantsGroupRollback, type GroupRollbackDeps } from '../../../../src/workflow/target/group-rollback.js';

const NS = 'fediversity';
const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'].map((name) => ({ name }));

function rep(node: string, outcome: RolloutOutcome, previousImage: string | null = `reg/${node}@sha256:old`): RolloutReport {
  return {
    version: 1, node, namespace: NS, outcome, reason: outcome, message: outcome, failedUnits: [], events: [], lastState: null, logTail: [], systemdJobs: [],
    image: `reg/${node}@sha256:new`, previousImage, timeoutSeconds: 60, startedAt: '2026-12-03T00:00:00Z', durations: {} as RolloutReport['durations'],
  };
}

type Answer = SetBackResult['outcome'] | Pick<SetBackResult, 'outcome' | 'holds'>;
const HOLDS: Record<SetBackResult['outcome'], SetBackResult['holds']> = { 'rolled-back': 'previous', 'rollback-failed': 'previous', interrupted: 'previous', changed: 'other' };

/** A fake setBack: records when each node starts and ends; answers `answers[node]` (default: rolled back); its wait sees the pod booting. */
function fakeSetBack(answers: Record<string, Answer> = {}, onStart: (node: string) => void = () => {}) {
  const log: string[] = [];
  const setBack = async (r: RunRollout, onVerdict: (v: Verdict) => void): Promise<SetBackResult> => {
    log.push(`start ${r.node} ${r.image} -> ${r.previousImage}`);
    onStart(r.node);
    onVerdict({ kind: 'waiting', phase: 'booting', detail: 'systemd is booting', systemdState: 'starting' });
    await new Promise((res) => setTimeout(res, r.node === 'n3' ? 20 : 5));
    log.push(`end ${r.node}`);
    const a = answers[r.node] ?? 'rolled-back';
    const { outcome, holds } = typeof a === 'string' ? { outcome: a, holds: HOLDS[a] } : a;
    return { outcome, holds, detail: `pod ${r.node}-old is ready` };
  };
  return { log, setBack };
}

/** The deps of a run; `shown` keeps what the view was told, `node: kind [words]`. */
function run(setBack: GroupRollbackDeps['setBack'], signal = new AbortController().signal, said: string[] = [], shown: string[] = []): GroupRollbackDeps {
  return {
    setBack,
    signal,
    progress: (l: string) => void said.push(l),
    shown: (node, step) => void shown.push(`${node}: ${step.kind}${'to' in step ? ` ${step.to}` : ''}${'verdict' in step && step.verdict ? ` (${step.verdict.kind})` : ''}${'why' in step ? `: ${step.why}` : ''}`),
  };
}

describe('rollBackGroup', () => {
  it('GIVEN waves of 2 and the rollout of wave 3 failed THEN wave 2 goes back first, both its nodes waited for, then wave 1; exit 4', async () => {
    // waves: [n1 n2] [n3 n4] [n5]; n5 rolled back by its own step
    const rollouts = [rep('n1', 'ready'), rep('n2', 'ready'), rep('n3', 'ready'), rep('n4', 'ready'), rep('n5', 'rolled-back')];
    const { log, setBack } = fakeSetBack();
    const said: string[] = [];
    const shown: string[] = [];
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, rollouts, run(setBack, undefined, said, shown));
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
    // each node's row: on its way back (then its wait's verdicts), then back
    expect(shown).toEqual([
      'n3: setting-back sha256:old',
      'n3: setting-back sha256:old (waiting)',
      'n4: setting-back sha256:old',
      'n4: setting-back sha256:old (waiting)',
      'n4: set-back sha256:old',
      'n3: set-back sha256:old',
      'n1: setting-back sha256:old',
      'n1: setting-back sha256:old (waiting)',
      'n2: setting-back sha256:old',
      'n2: setting-back sha256:old (waiting)',
      'n1: set-back sha256:old',
      'n2: set-back sha256:old',
    ]);
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
    const shown: string[] = [];
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, [rep('n1', 'ready'), rep('n3', 'ready'), rep('n5', 'rolled-back')], run(setBack, ac.signal, [], shown));
    expect(log.filter((l) => l.startsWith('start')).map((l) => l.split(' ')[1])).toEqual(['n3']);
    expect(r.nodes.map((n) => [n.node, n.outcome, n.runs])).toEqual([
      ['n3', 'set-back', 'reg/n3@sha256:old'],
      ['n1', 'not-reached', 'reg/n1@sha256:new'],
    ]);
    expect(r.exitCode).toBe(ExitCode.interrupted);
    expect(shown.at(-1)).toBe('n1: interrupted: not set back (the interrupt came before its wave): it runs sha256:new');
  });

  it('GIVEN an interrupt while the nodes of a wave go back THEN each says what its Deployment holds: its previous image (written, its pod not Ready), this run\'s (no write), or unknown', async () => {
    const ac = new AbortController();
    const { setBack } = fakeSetBack(
      { n1: { outcome: 'interrupted', holds: 'previous' }, n2: { outcome: 'interrupted', holds: 'this-run' }, n3: { outcome: 'interrupted', holds: 'unknown' } },
      () => ac.abort(new Error('SIGINT')),
    );
    const shown: string[] = [];
    const r = await rollBackGroup({ nodes, waveSize: 3, namespace: NS }, [rep('n1', 'ready'), rep('n2', 'ready'), rep('n3', 'ready'), rep('n4', 'rolled-back')], run(setBack, ac.signal, [], shown));
    expect(r.nodes.map((n) => [n.node, n.outcome, n.runs])).toEqual([
      ['n1', 'interrupted', 'reg/n1@sha256:old'],
      ['n2', 'interrupted', 'reg/n2@sha256:new'],
      ['n3', 'interrupted', null],
    ]);
    expect(r.exitCode).toBe(ExitCode.interrupted);
    expect(shown.filter((l) => l.includes('interrupted'))).toEqual([
      'n1: interrupted: set back to sha256:old, its pod not Ready yet',
      'n2: interrupted: it runs sha256:new, not set back',
      'n3: interrupted: what it runs is not known, not set back',
    ]);
  });

  it('GIVEN a set-back whose write the API server refused THEN it runs the image of this run, said as such, exit 6', async () => {
    const { setBack } = fakeSetBack({ n1: { outcome: 'rollback-failed', holds: 'this-run' } });
    const shown: string[] = [];
    const r = await rollBackGroup({ nodes, waveSize: 2, namespace: NS }, [rep('n1', 'ready'), rep('n5', 'rolled-back')], run(setBack, undefined, [], shown));
    expect(r.nodes.map((n) => [n.node, n.outcome, n.runs])).toEqual([['n1', 'failed', 'reg/n1@sha256:new']]);
    expect(r.exitCode).toBe(ExitCode.rollbackFailed);
    expect(shown.at(-1)).toBe('n1: not-set-back: pod n1-old is ready (it runs sha256:new)');
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

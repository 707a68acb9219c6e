import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, ToolError } from '../../../src/errors.js';
import { markStepRunning, outcomeExitCode, readRolloutReports, rolloutsExitCode, writeRolloutReport, waitForRunningSteps, type RolloutReport } from '../../../src/rollout/report.js';
import { formatRolloutSummary, shortImage } from '../../../src/rollout/report-format.js';

const GOOD = '127.0.0.1:5000/fediversity/web@sha256:1f3c9a7e2b6d4c8f0a1e5b9d3c7f2a6e0b4d8c2f6a9e3b7d1c5f9a2e6b0d4c81';
const BROKEN = '127.0.0.1:5000/fediversity/web@sha256:9e2d7c1b5a4f8e3d2c6b0a9f7e1d5c3b8a2f6e0d4c9b7a3f1e5d8c2b6a0f4e92';

function report(over: Partial<RolloutReport>): RolloutReport {
  return {
    version: 1,
    node: 'web',
    namespace: 'fediversity',
    outcome: 'ready',
    reason: 'ready',
    message: 'pod web-1 is ready',
    failedUnits: [],
    events: [],
    lastState: null,
    logTail: [],
    systemdJobs: [],
    image: BROKEN,
    previousImage: GOOD,
    timeoutSeconds: 300,
    startedAt: '2026-11-30T04:10:00.000Z',
    durations: { waitMs: 3200, evidenceReadMs: null, rollbackMs: null, evidenceToVerdictMs: null, evidenceToRollbackDoneMs: null, totalMs: 3300 },
    ...over,
  };
}

const ROLLED_BACK = report({
  node: 'db',
  outcome: 'rolled-back',
  reason: 'systemd-degraded',
  message: 'systemd in pod db-7b9c4d6f5-x2k9p is degraded (failed units: broken.service)',
  failedUnits: ['broken.service'],
  events: [{ time: '2026-11-30T04:10:05.000Z', type: 'Warning', reason: 'Unhealthy', object: 'Pod/db-7b9c4d6f5-x2k9p', count: 1, message: 'Readiness probe failed: systemd: degraded\nbroken.service loaded failed failed' }],
  lastState: { pod: 'db-7b9c4d6f5-x2k9p', phase: 'Running', ready: false, container: 'running', restartCount: 0, lastTerminated: null, systemdState: 'degraded' },
  logTail: ['[FAILED] Failed to start broken.service - Always fails.'],
  durations: { waitMs: 5000, evidenceReadMs: 150, rollbackMs: 4100, evidenceToVerdictMs: 500, evidenceToRollbackDoneMs: 4600, totalMs: 9100 },
});

describe('rollout reports', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rollout-report-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('maps each outcome to its exit code', () => {
    expect(outcomeExitCode('ready')).toBe(ExitCode.ok);
    expect(outcomeExitCode('rolled-back')).toBe(ExitCode.rolledBack);
    expect(outcomeExitCode('failed-no-previous')).toBe(ExitCode.failedNoPrevious);
    expect(outcomeExitCode('rollback-failed')).toBe(ExitCode.rollbackFailed);
    expect(outcomeExitCode('interrupted')).toBe(ExitCode.interrupted);
  });

  it('gives a run over several nodes the code of the worst outcome', () => {
    expect(rolloutsExitCode([])).toBe(0);
    expect(rolloutsExitCode([{ outcome: 'ready' }, { outcome: 'rolled-back' }])).toBe(4);
    expect(rolloutsExitCode([{ outcome: 'rolled-back' }, { outcome: 'rollback-failed' }, { outcome: 'failed-no-previous' }])).toBe(6);
    expect(rolloutsExitCode([{ outcome: 'interrupted' }, { outcome: 'ready' }])).toBe(130);
  });

  it('writes rollout-<ns>-<node>.json and reads all of a run directory back, sorted', async () => {
    const file = await writeRolloutReport(dir, ROLLED_BACK);
    await writeRolloutReport(dir, report({}));
    expect(file).toBe(join(dir, 'rollout-fediversity-db.json'));
    expect((await readdir(dir)).sort()).toEqual(['rollout-fediversity-db.json', 'rollout-fediversity-web.json']);
    const back = await readRolloutReports(dir);
    expect(back.map((r) => r.node)).toEqual(['db', 'web']);
    expect(back[0]).toEqual(ROLLED_BACK);
  });

  it('a missing run directory has no reports; a broken file is an error naming it', async () => {
    expect(await readRolloutReports(join(dir, 'nope'))).toEqual([]);
    await writeFile(join(dir, 'rollout-x-y.json'), '{"node":"y"}');
    await expect(readRolloutReports(dir)).rejects.toThrow(/rollout-x-y\.json: not a rollout report/);
  });

  it('a report file that is not JSON (a step killed while writing it) is a tool failure naming the file, not an unexpected one', async () => {
    await writeFile(join(dir, 'rollout-x-z.json'), '{"node":');
    const e = await readRolloutReports(dir).then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(ToolError);
    expect((e as ToolError).exitCode).toBe(ExitCode.tool);
    expect((e as ToolError).message).toMatch(/rollout-x-z\.json: not a rollout report: not JSON/);
  });

  it('summarises per node: ready, and rolled back to a digest because of the reason, with the evidence', () => {
    const text = formatRolloutSummary([ROLLED_BACK, report({})]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('fediversity/db: rolled back to sha256:1f3c9a7e2b6d because systemd in pod db-7b9c4d6f5-x2k9p is degraded (failed units: broken.service)');
    expect(lines[1]).toBe('fediversity/web: ready (sha256:9e2d7c1b5a4f) in 3.2s');
    expect(text).toContain('failed units: broken.service');
    expect(text).toContain('Warning Unhealthy Pod/db-7b9c4d6f5-x2k9p: Readiness probe failed: systemd: degraded');
    expect(text).toContain('[FAILED] Failed to start broken.service');
  });

  it('says so when there was nothing to roll back to, or the rollback failed', () => {
    expect(formatRolloutSummary([report({ outcome: 'failed-no-previous', previousImage: null, message: 'x; there is no previous revision to set back (this apply made the Deployment: a first deploy of the node, or its Deployment made again, as with a claim made again)' })])).toContain(
      'fediversity/web: FAILED: x; there is no previous revision to set back (this apply made the Deployment: a first deploy of the node, or its Deployment made again, as with a claim made again)',
    );
    expect(formatRolloutSummary([report({ outcome: 'rollback-failed', message: 'y' })])).toContain('the rollback to sha256:1f3c9a7e2b6d failed too');
    expect(formatRolloutSummary([])).toMatch(/No rollout ran/);
  });

  it('lists systemd\'s job queue of a boot the deadline cut short', () => {
    const text = formatRolloutSummary([
      report({
        outcome: 'rolled-back',
        reason: 'timeout',
        message: 'not ready within 40s; still booting: systemd is booting (systemd: starting); systemd was still waiting for hang.service (start, running)',
        systemdJobs: [
          { unit: 'hang.service', type: 'start', state: 'running' },
          { unit: 'multi-user.target', type: 'start', state: 'waiting' },
        ],
      }),
    ]);
    expect(text).toContain('systemd was still waiting for hang.service (start, running)');
    expect(text).toContain('  systemd jobs: hang.service start running, multi-user.target start waiting');
  });

  it('shortens digests, keeps tags', () => {
    expect(shortImage(GOOD)).toBe('sha256:1f3c9a7e2b6d');
    expect(shortImage('r/ns/web:abc')).toBe('r/ns/web:abc');
    expect(shortImage(null)).toBe('unknown image');
  });
});

describe('the marks of rollout steps in flight', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'deploy-steps-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('GIVEN a step that marked itself running WHEN it is done THEN the wait ends at once', async () => {
    const done = await markStepRunning(dir, 'ns', 'mail');
    expect(await readdir(dir)).toEqual(['rollout-ns-mail.running']);
    setTimeout(() => void done(), 300);
    const t0 = Date.now();
    expect(await waitForRunningSteps(dir, 10_000, 20)).toEqual([]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(await readdir(dir)).toEqual([]);
  });

  it('GIVEN the mark of a process that is gone THEN it is not waited for; a live one is, up to the grace', async () => {
    const gone = spawn('true');
    await new Promise((r) => gone.on('exit', r));
    await writeFile(join(dir, 'rollout-ns-dead.running'), `${gone.pid}\n`);
    expect(await waitForRunningSteps(dir, 10_000, 20)).toEqual([]);

    const live = spawn('sleep', ['30']);
    try {
      await writeFile(join(dir, 'rollout-ns-web.running'), `${live.pid}\n`);
      expect(await waitForRunningSteps(dir, 200, 20)).toEqual(['ns-web']);
    } finally {
      live.kill('SIGKILL');
    }
  });

  it('GIVEN no run directory THEN there is nothing to wait for', async () => {
    expect(await waitForRunningSteps(join(dir, 'missing'), 1000)).toEqual([]);
  });
});

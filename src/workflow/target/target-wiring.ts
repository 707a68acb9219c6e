/**
 * The collaborators of one target's run: the graph's synthesis, the SPIRE key, the state
 * backend and its lock (target-session.ts), the cluster's objects, the verified no-op check
 * and tofu (plan-target.ts), the pushes before tofu's apply and the rollout steps' reports
 * (apply-target.ts). Each step takes
 * them as an argument; loadTargetParts wires the real ones, here and nowhere else, so that a
 * unit test can pass a fixture tofu and fake listers instead.
 *
 * The real modules are imported when a run needs them, not when the program starts: tofu's
 * runner, the graph's synthesis (CDKTF) and the cluster client are most of what a plan loads.
 */
import type * as Synth from '../../graph/synth.js';
import type * as Reports from '../../rollout/report.js';
import type * as StageKey from '../../spire/stage-key.js';
import type * as RunLock from '../../state/run-lock.js';
import type * as Tofu from '../../tools/tofu/tofu.js';
import type * as Backend from './backend.js';
import type * as Fingerprint from '../noop/fingerprint.js';
import type * as NoopRecord from '../noop/record.js';
import type * as Verdict from '../noop/verdict.js';
import type * as Objects from '../drift/target-objects.js';
import type * as PushFirst from './push-first.js';

/** The tofu commands a target's run makes (src/tools/tofu/tofu.ts). */
export type TofuRunner = Pick<typeof Tofu, 'initGraph' | 'planGraph' | 'applyPlan' | 'readOutputs'>;

/** The verified no-op check (noop/): its verdict, a fingerprint of the target now, its record. */
export interface NoopCheck {
  readonly check: typeof Verdict.checkNoop;
  readonly fingerprint: typeof Fingerprint.fingerprintTarget;
  readonly record: typeof NoopRecord.recordNoop;
  readonly forget: typeof NoopRecord.forgetNoop;
}

export interface TargetParts {
  readonly writeGraph: typeof Synth.writeTargetGraph;
  readonly stageSpireAccess: typeof StageKey.stageSpireAccess;
  readonly openBackend: typeof Backend.openBackend;
  readonly takeRunLock: typeof RunLock.takeRunLock;
  /** One read of the target's objects and state (the cluster's listers and the backend). */
  readonly readTargetObjects: typeof Objects.readTargetObjects;
  readonly noop: NoopCheck;
  readonly tofu: TofuRunner;
  /** The rollout steps' reports in the run's directory. */
  readonly rolloutReports: Pick<typeof Reports, 'readRolloutReports' | 'waitForRunningSteps'>;
  /** The pushes an apply makes, before tofu's apply. */
  readonly pushFirst: typeof PushFirst.pushFirst;
}

/** The real collaborators. */
export async function loadTargetParts(): Promise<TargetParts> {
  const [synth, stageKey, backend, runLock, objects, verdict, fingerprint, record, tofu, reports, pushFirst] = await Promise.all([
    import('../../graph/synth.js'),
    import('../../spire/stage-key.js'),
    import('./backend.js'),
    import('../../state/run-lock.js'),
    import('../drift/target-objects.js'),
    import('../noop/verdict.js'),
    import('../noop/fingerprint.js'),
    import('../noop/record.js'),
    import('../../tools/tofu/tofu.js'),
    import('../../rollout/report.js'),
    import('./push-first.js'),
  ]);
  return {
    writeGraph: synth.writeTargetGraph,
    stageSpireAccess: stageKey.stageSpireAccess,
    openBackend: backend.openBackend,
    takeRunLock: runLock.takeRunLock,
    readTargetObjects: objects.readTargetObjects,
    noop: { check: verdict.checkNoop, fingerprint: fingerprint.fingerprintTarget, record: record.recordNoop, forget: record.forgetNoop },
    tofu: { initGraph: tofu.initGraph, planGraph: tofu.planGraph, applyPlan: tofu.applyPlan, readOutputs: tofu.readOutputs },
    rolloutReports: { readRolloutReports: reports.readRolloutReports, waitForRunningSteps: reports.waitForRunningSteps },
    pushFirst: pushFirst.pushFirst,
  };
}

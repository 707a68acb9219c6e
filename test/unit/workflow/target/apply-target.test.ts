/**
 * applyTarget without a cluster or tofu: a good apply (exit 0, the no-op record written
 * again), and its failures: tofu's apply fails (the error is the run's), a rollout step reports
 * a rollback (exit 4, the nodes after it held back), the apply interrupted (exit 130 from the
 * steps' reports, or tofu's interrupt when no step reported).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode, InterruptedError, ToolError } from '../../../../src/errors.js';
import { applyTarget } from '../../../../src/workflow/target/apply-target.js';
import type { PlannedApply } from '../../../../src/workflow/target/plan-target.js';
import { summarizePlan } from '../../../../src/workflow/summary/plan-summary.js';
import { address, change, fakeParts, fakeRun, fingerprint, model, report, type FakeAnswers } from '../target-fixture.js';
import { formatStepLine } from '../../../../src/contract/step-lines.js';


const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Every node's Deployment updated: each has a rollout step. */
const changes = model.nodes.flatMap((n) => [change(address.deployment(n.name), ['update']), change(address.rollout(n.name), ['delete', 'create'])]);

async function apply(answers: FakeAnswers, over: Partial<PlannedApply> = {}) {
  const fake = fakeParts(answers);
  const r = await fakeRun('apply');
  cleanups.push(r.cleanup);
  const plan: PlannedApply = {
    mode: 'apply',
    planFile: '/graph/tfplan',
    summary: summarizePlan(model, changes, true),
    scoped: undefined,
    noFastPlan: undefined,
    fingerprintBefore: fingerprint,
    graph: {},
    manifests: new Map(),
    ...over,
  };
  const result = applyTarget(fake.parts, r.session, plan, r.opts);
  return { ...fake, ...r, result };
}

describe('applyTarget', () => {
  it('GIVEN tofu applies and every rollout is ready THEN exit 0, the record dropped before and written after, the names read', async () => {
    const { result, named, calls, view, session } = await apply({ reports: model.nodes.map((n) => report(n.name, 'ready')) });
    const r = await result;
    expect(r).toMatchObject({ applied: true, exitCode: ExitCode.ok, nodeNames: model.nodes.map((n) => n.name), graphDir: session.graphDir });
    expect(r.rollouts).toHaveLength(model.nodes.length);
    expect(calls.map((c) => c.name)).toEqual(['noop.forget', 'tofu.apply', 'reports.read', 'noop.fingerprint', 'noop.record', 'tofu.output']);
    expect(named('tofu.apply')[0]!.args[0]).toMatchObject({ planFile: '/graph/tfplan', lockHeld: true });
    expect(named('noop.record')[0]!.args).toEqual([fingerprint, 'apply', fingerprint, []]);
    expect(view.told).toEqual([`planned all: ${model.nodes.map((n) => n.name).join(' ')}`, 'ended all ok']);
  });

  it('GIVEN the target cannot be read after a good apply THEN exit 0, no record, and the apply says why the next plan is a full one (seed 536657023 round 104 ended so, saying nothing)', async () => {
    const { result, named, progress } = await apply({ reports: model.nodes.map((n) => report(n.name, 'ready')), fingerprintFails: 'list Deployment: timed out after 15 s' });
    const r = await result;
    expect(r.exitCode).toBe(ExitCode.ok);
    expect(named('noop.record')).toEqual([]);
    expect(progress).toContain('[all] not recorded as verified (the next plan is a full one): the target could not be read after the apply (list Deployment: timed out after 15 s)');
  });

  it("GIVEN tofu's apply fails and no rollout step reported THEN the failure is the run's, after waiting for the steps' reports", async () => {
    const failure = new ToolError('tofu apply failed: the provider refused the Deployment');
    const { result, named, view, session } = await apply({ applyFails: failure });
    await expect(result).rejects.toBe(failure);
    expect(named('reports.wait').map((c) => c.args)).toEqual([[session.runDir, 20_000]]);
    expect(named('noop.record')).toEqual([]);
    expect(view.told.at(-1)).toBe('ended all failed');
  });

  it('GIVEN a rollout step rolled back (tofu fails with it) THEN exit 4, not an error; the nodes after it are held back; no record', async () => {
    // GIVEN a plan where beta comes after alpha
    const ordered = { ...model, nodes: model.nodes.map((n) => (n.name === 'beta' ? { ...n, after: ['alpha'] } : n)) };
    const summary = summarizePlan(ordered, changes, true);
    const fake = fakeParts({ applyFails: new ToolError('tofu apply failed: local-exec provisioner error'), reports: [report('alpha', 'rolled-back')] });
    const r = await fakeRun('apply', { model: ordered });
    cleanups.push(r.cleanup);
    const result = await applyTarget(fake.parts, r.session, { mode: 'apply', planFile: '/graph/tfplan', summary, scoped: undefined, noFastPlan: undefined, fingerprintBefore: fingerprint, graph: {}, manifests: new Map() }, r.opts);
    expect(result.exitCode).toBe(ExitCode.rolledBack);
    expect(result.applied).toBe(true);
    expect(result.rollouts.map((x) => `${x.node} ${x.outcome}`)).toEqual(['alpha rolled-back']);
    expect(result.summary.nodes.find((n) => n.node === 'beta')!.heldBackBy).toBe('alpha');
    expect(fake.named('noop.record')).toEqual([]);
  });

  it('GIVEN the apply interrupted while the steps ran THEN exit 130 from their reports; with no report, the interrupt itself is the error', async () => {
    const stop = new InterruptedError('tofu apply was interrupted');
    const reported = await apply({ applyFails: stop, reports: [report('alpha', 'ready'), report('beta', 'interrupted')] });
    await expect(reported.result).resolves.toMatchObject({ exitCode: ExitCode.interrupted, applied: true });
    expect(reported.named('reports.wait')).toHaveLength(1);
    const unreported = await apply({ applyFails: stop });
    await expect(unreported.result).rejects.toBe(stop);
  });

  it('GIVEN the plan pushes images THEN deploy pushes them before tofu applies, and tofu\'s events of those push steps are not shown again (push-first.ts)', async () => {
    const pushing = [...changes, change(address.push('alpha'), ['create']), change(address.push('gamma'), ['delete', 'create'])];
    const events = [
      { kind: 'apply-start', address: address.push('alpha'), action: 'create' },
      { kind: 'apply-complete', address: address.push('alpha'), action: 'create', elapsedSeconds: 0 },
      { kind: 'apply-errored', address: address.push('gamma'), action: 'create', elapsedSeconds: 0 },
      { kind: 'apply-start', address: address.deployment('alpha'), action: 'update' },
    ] as const;
    const { result, calls, view } = await apply({ reports: model.nodes.map((n) => report(n.name, 'ready')), events: [...events] }, { summary: summarizePlan(model, pushing, true) });
    await result;
    expect(calls.map((c) => c.name).slice(0, 3)).toEqual(['noop.forget', 'pushFirst', 'tofu.apply']);
    expect(calls.find((c) => c.name === 'pushFirst')!.args).toEqual([['alpha', 'gamma']]);
    // a push step's failure inside tofu is still shown; its start and end were the pushes' own
    expect(view.told.filter((t) => t.startsWith('tofu '))).toEqual(['tofu all apply-errored', 'tofu all apply-start']);
  });

  it('GIVEN a push fails before tofu THEN the error is the run\'s, tofu applies nothing, and the rows end failed', async () => {
    const failure = new ToolError('the image push of node alpha failed');
    const pushing = [...changes, change(address.push('alpha'), ['create'])];
    const { result, calls, view } = await apply({ pushFails: failure }, { summary: summarizePlan(model, pushing, true) });
    await expect(result).rejects.toBe(failure);
    expect(calls.map((c) => c.name)).toEqual(['noop.forget', 'pushFirst']);
    expect(view.told.at(-1)).toBe('ended all failed');
  });

  it('GIVEN the plan pushes nothing THEN no push runs before tofu', async () => {
    const { result, named } = await apply({ reports: model.nodes.map((n) => report(n.name, 'ready')) });
    await result;
    expect(named('pushFirst')).toEqual([]);
  });

  it("GIVEN a SPIRE step's failure THEN the run's error names the spire node and keeps only the step's lines", async () => {
    const spireModel = { ...model, spire: { node: 'spire-1' } as typeof model.spire };
    // the step's typed line (src/contract/step-lines.ts), then ssh's complaint
    const detail = `Error running command 'set -eu; ...the whole script...': exit status 1. Output: ${formatStepLine({ deployStep: 'spire', event: 'failed', node: 'spire-1', message: 'the spire node spire-1 cannot be reached over ssh' })}\nssh: connect to host spire-1 port 22: Connection refused`;
    const tofuError = Object.assign(new ToolError('tofu apply failed'), { diagnostics: [{ severity: 'error', detail }] });
    const fake = fakeParts({ applyFails: tofuError });
    const r = await fakeRun('apply', { model: spireModel });
    cleanups.push(r.cleanup);
    const plan: PlannedApply = { mode: 'apply', planFile: '/graph/tfplan', summary: summarizePlan(spireModel, changes, true), scoped: undefined, noFastPlan: 'the target has SPIRE steps', fingerprintBefore: undefined, graph: {}, manifests: new Map() };
    const err = (await applyTarget(fake.parts, r.session, plan, r.opts).catch((e: unknown) => e)) as ToolError;
    expect(err).not.toBe(tofuError);
    expect(err.message).toBe('tofu apply failed at the SPIRE steps with the spire node spire-1:\n  deploy: the spire node spire-1 cannot be reached over ssh\n  ssh: connect to host spire-1 port 22: Connection refused');
    expect(err.cause).toBe(tofuError);
  });
});

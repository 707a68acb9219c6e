/**
 * Records the pure planner's calls (src/workflow/target/planner-record.ts) in real runs on the
 * local cluster, one directory per scenario under test/fixtures/planner/, for the replay test
 * (test/unit/workflow/target/target-planner-recorded.test.ts). Run by hand, never by `npm
 * test`: `npx vitest run --config test/record/vitest.config.ts` (docs/tests.md says when).
 *
 * The scenarios, in one namespace, one after the other (each the state the one before left):
 *   first-apply            the first apply of a group of two nodes (web, mail)
 *   noop-verified          a plan right after: verified without tofu
 *   image-changed-scoped   a plan with web's image changed: web planned alone (-target)
 *   hand-edit-full-apply   an apply after `kubectl set env deployment/web FOO=bar`: the full
 *                          plan, and the ownership step writes the Deployment back before tofu
 *   claim-at-risk-refused  an apply after `kubectl delete pvc mail-state --wait=false` (the
 *                          claim Terminating while its pod runs): refused, exit 2
 * Each scenario's directory is emptied first; unit-fake/ and any other directory stay.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANNER_RECORD_ENV, readPlannerRecord, type PlannerRecord } from '../../src/workflow/target/planner-record.js';
import { DeployHarness, images, type DeployRun } from '../e2e/harness.js';
import type { BuiltImage } from '../integration/images-scripts.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'planner');

/** The records of one scenario, in the order of their calls. */
function recordsOf(scenario: string): PlannerRecord[] {
  const dir = join(fixtures, scenario);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => readPlannerRecord(readFileSync(join(dir, f), 'utf8'), join(dir, f)))
    .sort((a, b) => a.call - b.call);
}

/** The answer of the first recorded call of `fn` in a scenario (JSON as written). */
function answerOf(scenario: string, fn: PlannerRecord['function']): unknown {
  const record = recordsOf(scenario).find((r) => r.function === fn);
  if (record === undefined) throw new Error(`scenario ${scenario}: no call of ${fn} was recorded`);
  return record.answer;
}

describe('the planner recorded in real runs', () => {
  let h: DeployHarness;
  let good: BuiltImage;
  let changed: BuiltImage;
  let plan: string;

  /** Runs `deploy <verb>` with the planner's calls recorded into the scenario's directory (emptied first). */
  async function recorded(scenario: string, verb: string, file: string): Promise<DeployRun> {
    const dir = join(fixtures, scenario);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return h.deploy(verb, file, ['--target', 'all'], { [PLANNER_RECORD_ENV]: dir });
  }

  beforeAll(async () => {
    h = await DeployHarness.create('record');
    [good, changed] = [await images.good(), await images.goodWith('record=scoped')];
    plan = await h.writePlan('group', { web: { image: good }, mail: { image: good } });
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('first-apply: the first apply of two nodes', async () => {
    const r = await recorded('first-apply', 'apply', plan);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(answerOf('first-apply', 'decideBeforeTofu')).toMatchObject({ path: 'full' });
  });

  it('noop-verified: a plan right after the apply is verified without tofu', async () => {
    const r = await recorded('noop-verified', 'plan', plan);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(answerOf('noop-verified', 'decideBeforeTofu')).toMatchObject({ path: 'verified' });
  });

  it("image-changed-scoped: a plan with web's image changed plans web alone", async () => {
    const next = await h.writePlan('changed', { web: { image: changed }, mail: { image: good } });
    const r = await recorded('image-changed-scoped', 'plan', next);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(answerOf('image-changed-scoped', 'decideBeforeTofu')).toMatchObject({ path: 'scoped' });
  });

  it('hand-edit-full-apply: an apply after a hand edit of web by kubectl runs the full plan and the ownership step', async () => {
    await h.kubectlOk(['set', 'env', 'deployment/web', 'FOO=bar']);
    const r = await recorded('hand-edit-full-apply', 'apply', plan);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(answerOf('hand-edit-full-apply', 'decideBeforeTofu')).toMatchObject({ path: 'full', ownershipStep: { fingerprintAgain: expect.any(Boolean) } });
    expect(recordsOf('hand-edit-full-apply').map((rec) => rec.function)).toContain('afterOwnershipStep');
  });

  it("claim-at-risk-refused: an apply while mail's claim is being deleted is refused (exit 2)", async () => {
    await h.kubectlOk(['delete', 'pvc', 'mail-state', '--wait=false']);
    const r = await recorded('claim-at-risk-refused', 'apply', plan);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(answerOf('claim-at-risk-refused', 'judgeObjects')).toMatchObject({ refusal: { $error: { exitCode: 2 } } });
  });
});

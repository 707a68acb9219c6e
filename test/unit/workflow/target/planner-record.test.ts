/**
 * The record of the planner's calls (DEPLOY_PLANNER_RECORD): written only when asked, one file
 * per call named by target, number and function, numbered on after the files already there,
 * with what the function reads and nothing of the run's credentials; read back typed.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { graphPart, plannerCaller, PLANNER_RECORD_ENV, readPlannerRecord, replayPlannerCall } from '../../../../src/workflow/target/planner-record.js';
import { model } from '../target-fixture.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'planner-record-'));
  dirs.push(d);
  return d;
}

const runEnv = { TF_HTTP_PASSWORD: 'hunter2', TF_HTTP_ADDRESS: 'http://u:hunter2@backend.test/x', KUBE_CONFIG_PATH: '/k/config', DEPLOY_FAST_PLAN: 'off' };

describe('plannerCaller', () => {
  it('GIVEN DEPLOY_PLANNER_RECORD unset or empty THEN the planner answers and nothing is written', () => {
    for (const env of [{ ...runEnv }, { ...runEnv, [PLANNER_RECORD_ENV]: '' }]) {
      const reads = plannerCaller(env, 'all')('planReads', { mode: 'plan', model, env });
      expect(reads.noFastPlan).toBe('DEPLOY_FAST_PLAN=off');
    }
    // (an empty directory name would have written beside the process)
    expect(existsSync('all-1-planReads.json')).toBe(false);
  });

  it('GIVEN DEPLOY_PLANNER_RECORD THEN each call is one file, numbered on from the files there, with DEPLOY_FAST_PLAN alone of the environment', async () => {
    const dir = join(await tempDir(), 'runs');
    const env = { ...runEnv, [PLANNER_RECORD_ENV]: dir };
    const first = plannerCaller(env, 'all');
    first('planReads', { mode: 'plan', model, env });
    first('judgeObjects', { mode: 'apply', model, allowed: new Set(['alpha']), seen: 'the cluster could not be read', manifests: new Map() });
    // a second run into the same directory numbers on
    plannerCaller(env, 'all')('submissionRefusal', { model, outputs: { submission_id: { value: 'other' } } });
    expect((await readdir(dir)).sort()).toEqual(['all-1-planReads.json', 'all-2-judgeObjects.json', 'all-3-submissionRefusal.json']);
    const texts = await Promise.all((await readdir(dir)).map((f) => readFile(join(dir, f), 'utf8')));
    for (const text of texts) {
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('KUBE_CONFIG_PATH');
    }
    const reads = readPlannerRecord(texts[0]!, 'all-1-planReads.json');
    expect(reads).toMatchObject({ function: 'planReads', target: 'all', call: 1, inputs: { mode: 'plan', env: { DEPLOY_FAST_PLAN: 'off' } } });
    // read back typed, each call made again gives the answer recorded
    for (const [i, text] of texts.entries()) {
      const record = readPlannerRecord(text, `file ${i}`);
      expect(replayPlannerCall(record)).toStrictEqual(record.answer);
    }
    const judged = readPlannerRecord(texts[1]!, 'all-2-judgeObjects.json');
    expect(judged.function === 'judgeObjects' && judged.inputs.allowed).toEqual(new Set(['alpha']));
  });

  it('GIVEN a record whose inputs lack a field the planner takes THEN the read fails, naming the file and the field', () => {
    const text = JSON.stringify({ format: 'deploy-planner-record/1', target: 'all', call: 1, function: 'planReads', inputs: { mode: 'plan', env: {} }, answer: null });
    expect(() => readPlannerRecord(text, 'x.json')).toThrow(/x\.json: .*model/);
  });
});

describe('graphPart', () => {
  it('GIVEN a graph THEN every block keeps its type and name, a Deployment its manifest, and nothing else', () => {
    const doc = {
      terraform: { backend: { http: {} } },
      resource: { null_resource: { 'node-a_rollout_1': { triggers: { script: 'long' } } }, kubernetes_manifest: { 'node-a_deployment_2': { manifest: { kind: 'Deployment' }, field_manager: {} } } },
      data: { external: { 'image-a_digest_3': { program: ['x'] } } },
    };
    expect(graphPart(doc)).toEqual({
      resource: { null_resource: { 'node-a_rollout_1': {} }, kubernetes_manifest: { 'node-a_deployment_2': { manifest: { kind: 'Deployment' } } } },
      data: { external: { 'image-a_digest_3': {} } },
    });
  });
});

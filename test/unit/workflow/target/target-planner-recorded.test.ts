/**
 * The planner (target-planner.ts) over the inputs of recorded runs: each file under
 * test/fixtures/planner/<scenario>/ holds one call of a run (planner-record.ts writes them when
 * DEPLOY_PLANNER_RECORD is set), and the same function over the same inputs must give the same
 * answer. A change of the planner that changes a recorded run's decision fails here, naming the
 * scenario and the call; if the change is meant, record again (docs/tests.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPlannerRecord, replayPlannerCall } from '../../../../src/workflow/target/planner-record.js';

const root = join(import.meta.dirname, '../../../fixtures/planner');

/** Every record under the fixtures, by scenario (the directory that holds it, under root). */
function recordsByScenario(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!file.endsWith('.json')) continue;
    const scenario = relative(root, join(root, file, '..'));
    out.set(scenario, [...(out.get(scenario) ?? []), join(root, file)]);
  }
  return out;
}

const scenarios = recordsByScenario();

describe('the planner over recorded runs', () => {
  it('GIVEN the fixtures THEN there are recorded runs, and among them a call of each function of the planner', () => {
    expect(scenarios.size).toBeGreaterThan(0);
    const functions = new Set([...scenarios.values()].flat().map((f) => readPlannerRecord(readFileSync(f, 'utf8'), f).function));
    expect([...functions].sort()).toEqual(['afterOwnershipStep', 'decideAfterTofu', 'decideBeforeTofu', 'judgeObjects', 'planReads', 'submissionRefusal']);
  });

  for (const [scenario, files] of scenarios) {
    describe(scenario, () => {
      for (const file of files) {
        const name = relative(join(root, scenario), file);
        it(`GIVEN the inputs of ${name} THEN the planner answers as recorded`, () => {
          const record = readPlannerRecord(readFileSync(file, 'utf8'), file);
          expect(replayPlannerCall(record), `${scenario}/${name}: the planner's answer changed (if meant, record again: docs/tests.md)`).toStrictEqual(record.answer);
        });
      }
    });
  }
});

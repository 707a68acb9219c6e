import { describe, expect, it } from 'vitest';
import config from '../../../vitest.config.ts';
import { LANES } from '../../lanes.ts';
import { mergeReports, renderProfile, type Report } from '../../../bench/test-profile.ts';

const projectsOf = (c: typeof config) =>
  (c.test?.projects ?? []).map((p) => (typeof p === 'object' && p !== null && 'test' in p ? p.test?.name : undefined));

describe("npm test's lanes (test/run.ts)", () => {
  it('puts every project of vitest.config.ts in exactly one lane, and e2e (the cluster) in a lane of its own', () => {
    const inLanes = LANES.flatMap((l) => l.projects);
    expect([...inLanes].sort()).toEqual([...projectsOf(config)].sort());
    expect(new Set(inLanes).size).toBe(inLanes.length);
    expect(LANES.find((l) => l.projects.includes('e2e'))?.projects).toEqual(['e2e']);
    // one lane on the console as it comes; the others' output is kept and shown at their end
    expect(LANES.filter((l) => l.live)).toHaveLength(1);
  });
});

describe('the profile of a run in lanes (bench/test-profile.ts)', () => {
  const mod = (file: string, project: string, queuedAt: number, endedAt: number) => ({
    file, project, queuedAt, endedAt, environmentSetupMs: 0, prepareMs: 0, collectMs: 1000, setupMs: 0, testsMs: endedAt - queuedAt - 1000, state: 'passed',
  });
  const lane = (startedAt: number, endedAt: number, modules: ReturnType<typeof mod>[], tests: number): Report => ({
    startTime: startedAt, numTotalTests: tests, numFailedTests: 0, testResults: [], profile: { startedAt, endedAt, modules },
  });

  it('reads the lanes of one run as one: the files of both, from the first start to the last end', () => {
    // GIVEN the e2e lane (0-100 s) and the unit + integration lane beside it (0-30 s)
    const e2e = lane(0, 100_000, [mod('test/e2e/a.test.ts', 'e2e', 5_000, 100_000)], 3);
    const side = lane(200, 30_000, [mod('test/unit/b.test.ts', 'unit', 1_000, 10_000), mod('test/integration/c.test.ts', 'integration', 10_000, 30_000)], 7);
    // WHEN merged THEN one run of 100 s with 3 files and 10 tests, each project its own row
    const merged = mergeReports([e2e, side]);
    expect(merged.profile).toMatchObject({ startedAt: 0, endedAt: 100_000 });
    expect(merged.numTotalTests).toBe(10);
    const text = renderProfile(merged, 'two lanes');
    expect(text).toContain('3 files, 10 tests (0 failed), wall 100.0 s');
    expect(text).toMatch(/^e2e +1 +5\.0 +100\.0 +95\.0/m);
    expect(text).toMatch(/^integration +1 +10\.0 +30\.0 +20\.0/m);
  });
});

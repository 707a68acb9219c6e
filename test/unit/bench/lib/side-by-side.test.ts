import { describe, expect, it } from 'vitest';
import { GROWTH_GOAL, HELM_GOAL, verdict } from '../../../../bench/lib/side-by-side.ts';
import { spread } from '../../../../bench/lib/stats.ts';

describe("issue 48's verdicts: deploy against Helm, and against itself at 50 nodes", () => {
  it('GIVEN medians of deploy and Helm WHEN compared THEN the ratio is of the medians and met only at or under the goal', () => {
    expect(verdict(spread([3, 2.9, 9]), spread([3, 3.1, 2]), HELM_GOAL)).toEqual({ ratio: 1, met: true });
    const slower = verdict(spread([7.1, 6.2, 7.2]), spread([3.0, 2.9, 3.1]), HELM_GOAL);
    expect(slower.ratio).toBeCloseTo(7.1 / 3.0);
    expect(slower.met).toBe(false);
    expect(verdict(spread([20]), spread([11]), GROWTH_GOAL).met).toBe(true);
    expect(verdict(spread([23]), spread([11]), GROWTH_GOAL).met).toBe(false);
  });

  it('GIVEN a side not measured (absent, or no runs) WHEN compared THEN there is no verdict, neither met nor failed', () => {
    expect(verdict(spread([3]), undefined, HELM_GOAL)).toEqual({ ratio: Number.NaN, met: null });
    expect(verdict(spread([3]), spread([]), HELM_GOAL).met).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { rotated } from '../../../../bench/lib/stats.ts';

describe('rotated: the order of one round of an interleaving', () => {
  it('GIVEN three sides WHEN rotated for rounds 0 to 3 THEN each comes first once in three rounds, and round 3 is round 0', () => {
    const sides = ['deploy', 'helm', 'floor'];
    expect([0, 1, 2, 3].map((r) => rotated(sides, r))).toEqual([
      ['deploy', 'helm', 'floor'],
      ['helm', 'floor', 'deploy'],
      ['floor', 'deploy', 'helm'],
      ['deploy', 'helm', 'floor'],
    ]);
    expect(rotated(sides, -1)).toEqual(['floor', 'deploy', 'helm']);
    expect(rotated(['only'], 5)).toEqual(['only']);
  });
});
